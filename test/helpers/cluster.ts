/**
 * Cluster mode for tests (docs/cluster.md): one throwaway PostgreSQL per test file, a fresh
 * database per test, N real daemons (`agentd serve --postgres URL --node-id ID`) on it with
 * one shared secret and one client token.
 *
 *   const pg = usePostgres();                       // file level: beforeAll/afterAll
 *   describe.runIf(havePostgres)('…', () => {
 *     test('…', async () => {
 *       const cl = await startCluster(pg(), { nodes: ['a', 'b', 'c'], config: { approval_policy: 'auto' } });
 *       const a = cl.node('a');
 *       const c = await cl.connect(a);             // test/helpers/client.ts, closed with the cluster
 *       await a.kill9();                           // kill -9, keeps the data dir
 *       await a.start();                           // the same node id and data dir, a new port
 *     });                                          // every node and client stopped after the test
 *   });
 *   describe.skipIf(havePostgres)('…', () => test.skip(`skipped: ${POSTGRES_MISSING}`, () => {}));
 *
 * Only what the cluster contract promises is used: the serve flags, `/healthz` (`node_id`,
 * `sessions_owned`), `agentd cluster status --json`, the application_name
 * `agentd:<node_id>` of a node's PostgreSQL connections, and the client protocol. Each
 * node connects as its own (superuser) role, so that a partition can be made real: the
 * role refused logins and its backends terminated (terminating alone is not a partition:
 * the pool reconnects at once).
 */
import type { NodeStatus } from '../../src/journal/pg/leases.js';
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { afterAll, beforeAll, onTestFinished } from 'vitest';
import { connect, type ConnectOptions, type TestClient } from './client.js';
import { runAgentd, startDaemon, tempDataDir, type Daemon, type Health } from './daemon.js';
import { findPostgres, POSTGRES_MISSING, startPostgres, type PostgresServer } from './postgres.js';
import { cleanup } from './session.js';

export { POSTGRES_MISSING };

// Under CI (.ci/run installs PostgreSQL) these tests always run: a failed install fails them, never skips them.
export const havePostgres = findPostgres() !== null || process.env.CI === 'true';

/**
 * One PostgreSQL server for the calling test file: started in `beforeAll` (when
 * `havePostgres`), stopped in `afterAll`. Returns a getter for use inside tests.
 */
export function usePostgres(): () => PostgresServer {
  let server: PostgresServer | undefined;
  beforeAll(async () => {
    // Three nodes × (pool + LISTEN) plus restarted nodes whose old backends linger a moment.
    if (havePostgres) server = await startPostgres({ maxConnections: 150 });
  });
  afterAll(async () => {
    await server?.stop();
  });
  return () => {
    if (!server) throw new Error('PostgreSQL is not running (usePostgres() at file level, tests under describe.runIf(havePostgres))');
    return server;
  };
}

export interface ClusterHealth extends Health {
  node_id: string;
  sessions_owned: number;
}

/** One node of `agentd cluster status --json` (the daemon's own type). */
export type { NodeStatus };

export interface ClusterOptions {
  /** Node ids (default `['a', 'b', 'c']`) or a count (ids `n1`…). */
  nodes?: string[] | number;
  /** DATA_DIR/config.json of every node (journal and node id come from the flags). */
  config?: Record<string, unknown>;
  /** Merged into the config's `cluster` part (e.g. `{ lease_ms: 1500, heartbeat_ms: 500 }`). */
  cluster?: Record<string, unknown>;
  /** Extra environment for every node. */
  env?: Record<string, string | undefined>;
  /** Daemon log level (default: $AGENTD_TEST_LOG_LEVEL or "warn"). */
  logLevel?: string;
  /** Start the nodes (default true; false: call `node.start()` yourself). */
  start?: boolean;
}

export interface ClusterNode {
  readonly id: string;
  readonly dataDir: string;
  /** The running process (throws when the node is down). */
  readonly daemon: Daemon;
  readonly up: boolean;
  /** `ws://HOST:PORT` of the running process (the port changes on every start). */
  readonly url: string;
  readonly wsUrl: string;
  readonly httpUrl: string;
  readonly token: string;
  readonly pid: number;
  /** Start the node (again): the same node id, data dir, config, secret and token. */
  start(): Promise<void>;
  /** `kill -9`, waiting for the exit; the data dir stays. */
  kill9(): Promise<void>;
  /** Send `signal` (default SIGTERM) and wait for the exit; the data dir stays. */
  stop(signal?: NodeJS.Signals): Promise<number | null>;
  healthz(): Promise<ClusterHealth>;
  /** Everything every process of this node wrote to stderr, for failure messages. */
  logs(): string;
}

export interface Cluster {
  readonly pg: PostgresServer;
  /** The cluster's database URL as the superuser (what `agentd cluster status` is given). */
  readonly url: string;
  /** The database URL node `id` is started with (its own role). */
  nodeUrl(id: string): string;
  readonly database: string;
  readonly secret: string;
  readonly token: string;
  readonly nodes: ClusterNode[];
  node(id: string): ClusterNode;
  /** Nodes that are up now. */
  live(): ClusterNode[];
  /** A protocol client on `node` (closed by `close()`). */
  connect(node: ClusterNode, options?: ConnectOptions): Promise<TestClient>;
  /** `agentd cluster status --postgres URL --json`. */
  status(): Promise<NodeStatus[]>;
  /** `agentd cluster status --postgres URL` (the table), stdout. */
  statusText(): Promise<string>;
  /** `sessions_owned` of every node that is up, by node id (from /healthz). */
  owned(): Promise<Record<string, number>>;
  /** Wait until `pred(owned())` holds; returns that map. */
  waitOwned(pred: (owned: Record<string, number>) => boolean, timeoutMs?: number, what?: string): Promise<Record<string, number>>;
  /** Terminate every PostgreSQL backend of node `id` once (application_name `agentd:<id>[:…]`); returns how many. */
  terminateBackends(id: string): Promise<number>;
  /**
   * Cut node `id` off the database for `ms`: its role refused new connections (unless
   * `block: false`) and its backends terminated every `everyMs` (default 50) until then;
   * then let it in again. Returns how many backends were terminated in all.
   */
  partition(id: string, ms: number, options?: { everyMs?: number; block?: boolean }): Promise<number>;
  /** The database's backends now (who, state, waiting on what, running what), for failure messages. */
  activity(): Promise<string>;
  /** kill -9 every node, close every client, remove the data dirs. */
  close(): Promise<void>;
  /** Every node's logs, labelled. */
  logs(): string;
}

/** Clients a cluster opened, to close at the end. */
function nodeIds(nodes: ClusterOptions['nodes']): string[] {
  if (nodes === undefined) return ['a', 'b', 'c'];
  if (typeof nodes === 'number') return Array.from({ length: nodes }, (_, i) => `n${i + 1}`);
  return nodes;
}

/**
 * Start a cluster on a fresh database of `server`. Inside a test it is closed when the
 * test finishes (pass or fail); call `close()` yourself elsewhere.
 */
export async function startCluster(server: PostgresServer, options: ClusterOptions = {}): Promise<Cluster> {
  const url = await server.createDatabase();
  const database = new URL(url).pathname.slice(1);
  const ids = nodeIds(options.nodes);
  const roleOf = (id: string) => `${database}_${id}`.toLowerCase().replace(/[^a-z0-9_]/g, '_');
  for (const id of ids) await server.admin(`CREATE ROLE "${roleOf(id)}" LOGIN SUPERUSER`);
  const nodeUrl = (id: string) => {
    const u = new URL(url);
    u.username = roleOf(id);
    return u.toString();
  };
  const secret = randomBytes(24).toString('hex');
  const token = randomBytes(16).toString('hex');
  const clients: TestClient[] = [];
  const config = {
    ...options.config,
    ...(options.cluster && { cluster: { ...(options.config?.cluster as object | undefined), ...options.cluster } }),
  };

  /** Nodes that exited without the harness stopping them. */
  const unexpected: string[] = [];
  const makeNode = (id: string): ClusterNode => {
    const dataDir = tempDataDir(`agentd-node-${id}-`);
    let current: Daemon | null = null;
    let past = '';
    /** Set while this harness itself is stopping the process. */
    let stopping = false;
    const daemon = (): Daemon => {
      if (!current) throw new Error(`node ${id} is down`);
      return current;
    };
    const down = async (signal: NodeJS.Signals): Promise<number | null> => {
      const d = current;
      if (!d) return null;
      stopping = true;
      const code = await d.stop(signal).finally(() => (stopping = false));
      past += `--- node ${id} pid ${d.pid} ended by ${signal} (code ${code}) ---\n${d.stderr()}`;
      current = null;
      return code;
    };
    const node: ClusterNode = {
      id,
      dataDir,
      get daemon() {
        return daemon();
      },
      get up() {
        return current !== null && current.proc.exitCode === null && current.proc.signalCode === null;
      },
      get url() {
        return daemon().url;
      },
      get wsUrl() {
        return daemon().wsUrl;
      },
      get httpUrl() {
        return daemon().httpUrl;
      },
      get token() {
        return token;
      },
      get pid() {
        return daemon().pid;
      },
      async start() {
        if (current) throw new Error(`node ${id} is already running (pid ${current.pid})`);
        current = await startDaemon({
          dataDir,
          config,
          token,
          args: ['--postgres', nodeUrl(id), '--node-id', id],
          env: { AGENTD_CLUSTER_SECRET: secret, AGENTD_POSTGRES_URL: undefined, ...options.env },
          ...(options.logLevel && { logLevel: options.logLevel }),
        });
        const d = current;
        // A node that exits without being told to (a crash, or a signal from outside the test).
        d.proc.once('exit', (code, signal) => {
          if (stopping || current !== d) return;
          const line = `node ${id} pid ${d.pid} exited on its own at ${new Date().toISOString()} (code ${code}, signal ${signal})`;
          unexpected.push(line);
          past += `--- ${line} ---\n${d.stderr()}`;
          current = null;
        });
      },
      async kill9() {
        await down('SIGKILL');
      },
      stop: (signal: NodeJS.Signals = 'SIGTERM') => down(signal),
      async healthz() {
        const res = await fetch(`${daemon().httpUrl}/healthz`, { signal: AbortSignal.timeout(5000) });
        return (await res.json()) as ClusterHealth;
      },
      logs: () => past + (current ? `--- node ${id} pid ${current.pid} (running) ---\n${current.stderr()}` : ''),
    };
    return node;
  };

  const nodes = ids.map(makeNode);
  const node = (id: string) => {
    const n = nodes.find((x) => x.id === id);
    if (!n) throw new Error(`no node ${id}`);
    return n;
  };
  /** Why the latest owned() left a node out. */
  let ownedErrors: Record<string, string> = {};
  const owned = async () => {
    const out: Record<string, number> = {};
    ownedErrors = {};
    await Promise.all(
      nodes
        .filter((n) => n.up)
        .map(async (n) => {
          try {
            out[n.id] = (await n.healthz()).sessions_owned;
          } catch (err) {
            // Died between the check and the request, or not answering.
            ownedErrors[n.id] = `${(err as Error).message} ${String((err as Error).cause ?? '')}`.trim();
          }
        }),
    );
    return out;
  };
  const statusRun = async (json: boolean) => {
    const r = await runAgentd(['cluster', 'status', '--postgres', url, ...(json ? ['--json'] : [])], { AGENTD_CLUSTER_SECRET: secret });
    if (r.code !== 0) throw new Error(`agentd cluster status exited ${r.code}\n${r.stdout}\n${r.stderr}`);
    return r.stdout;
  };
  const terminateBackends = async (id: string) => {
    const { rows } = await server.admin<{ n: string }>(
      'SELECT count(pg_terminate_backend(pid)) AS n FROM pg_stat_activity ' +
        "WHERE datname = $1 AND (application_name = $2 OR application_name LIKE $2 || ':%')",
      [database, `agentd:${id}`],
    );
    return Number(rows[0]?.n ?? 0);
  };

  const cluster: Cluster = {
    pg: server,
    url,
    nodeUrl,
    database,
    secret,
    token,
    nodes,
    node,
    live: () => nodes.filter((n) => n.up),
    async connect(n, connectOptions) {
      const c = await connect(n, connectOptions);
      clients.push(c);
      return c;
    },
    async status() {
      const parsed = JSON.parse(await statusRun(true)) as { nodes: NodeStatus[] };
      return parsed.nodes;
    },
    statusText: () => statusRun(false),
    owned,
    async waitOwned(pred, timeoutMs = 15_000, what = 'sessions_owned') {
      const deadline = Date.now() + timeoutMs;
      let last: Record<string, number> = {};
      for (;;) {
        last = await owned();
        if (pred(last)) return last;
        if (Date.now() > deadline) {
          throw new Error(
            `timed out waiting for ${what}; sessions_owned now ${JSON.stringify(last)}; /healthz failures ${JSON.stringify(ownedErrors)}` +
              (unexpected.length ? `; ${unexpected.join('; ')}` : ''),
          );
        }
        await new Promise((r) => setTimeout(r, 50));
      }
    },
    terminateBackends,
    async activity() {
      const { rows } = await server.admin(
        "SELECT pid, usename, application_name AS app, state, wait_event_type || ':' || wait_event AS waiting, " +
          'round(extract(epoch FROM now() - xact_start) * 1000) AS xact_ms, round(extract(epoch FROM now() - query_start) * 1000) AS query_ms, ' +
          'pg_blocking_pids(pid) AS blocked_by, left(query, 120) AS query FROM pg_stat_activity WHERE datname = $1 ORDER BY application_name',
        [database],
      );
      return rows.map((r) => JSON.stringify(r)).join('\n');
    },
    async partition(id, ms, { everyMs = 50, block = true } = {}) {
      // One admin connection for the whole loop (a connection per round would be slow).
      const admin = new pg.Client({ connectionString: server.url() });
      await admin.connect();
      const role = roleOf(id);
      let total = 0;
      try {
        if (block) await admin.query(`ALTER ROLE "${role}" NOLOGIN`);
        const until = Date.now() + ms;
        while (Date.now() < until) {
          const { rows } = await admin.query<{ n: string }>(
            'SELECT count(pg_terminate_backend(pid)) AS n FROM pg_stat_activity ' +
              "WHERE datname = $1 AND (usename = $3 OR application_name = $2 OR application_name LIKE $2 || ':%')",
            [database, `agentd:${id}`, role],
          );
          total += Number(rows[0]?.n ?? 0);
          await new Promise((r) => setTimeout(r, everyMs));
        }
      } finally {
        if (block) await admin.query(`ALTER ROLE "${role}" LOGIN`).catch(() => undefined);
        await admin.end();
      }
      return total;
    },
    async close() {
      await Promise.all(clients.map((c) => c.close().catch(() => undefined)));
      await Promise.all(nodes.map((n) => n.kill9().catch(() => undefined)));
      for (const n of nodes) cleanup(n.dataDir);
    },
    logs: () => (unexpected.length ? `${unexpected.join('\n')}\n` : '') + nodes.map((n) => n.logs()).join('\n'),
  };

  try {
    onTestFinished(() => cluster.close());
  } catch {
    // Not inside a test: the caller closes it.
  }
  if (options.start ?? true) {
    try {
      await Promise.all(nodes.map((n) => n.start()));
    } catch (err) {
      await cluster.close();
      throw err;
    }
  }
  return cluster;
}

/** `/healthz` of a node (with `node_id` and `sessions_owned` in cluster mode). */
export function healthz(node: ClusterNode): Promise<ClusterHealth> {
  return node.healthz();
}

/**
 * Every batch frame a client received, as the exact text and the time it arrived, by
 * session and sequence; a sequence received twice with different bytes is recorded in
 * `conflicts`. Attached to the client's socket next to TestClient's own listener.
 */
export interface BatchLog {
  /** session → sequence → frame text. */
  readonly raw: Map<string, Map<number, string>>;
  /** session → sequence → Date.now() at the first arrival. */
  readonly receivedAt: Map<string, Map<number, number>>;
  readonly conflicts: string[];
}

export function recordBatches(client: TestClient): BatchLog {
  const log: BatchLog = { raw: new Map(), receivedAt: new Map(), conflicts: [] };
  client.ws.on('message', (data, isBinary) => {
    const at = Date.now();
    if (isBinary) return;
    const text = (data as Buffer).toString('utf8');
    if (!text.startsWith('{"type":"batch"')) return;
    const f = JSON.parse(text) as { session_id: string; sequence: number };
    let raw = log.raw.get(f.session_id);
    if (!raw) {
      raw = new Map();
      log.raw.set(f.session_id, raw);
      log.receivedAt.set(f.session_id, new Map());
    }
    const before = raw.get(f.sequence);
    if (before === undefined) {
      raw.set(f.sequence, text);
      log.receivedAt.get(f.session_id)!.set(f.sequence, at);
    } else if (before !== text) {
      log.conflicts.push(`${f.session_id}#${f.sequence}: ${before.slice(0, 300)} ≠ ${text.slice(0, 300)}`);
    }
  });
  return log;
}
