/**
 * A local agentd cluster (docs/cluster.md) for the demo (`npm run cluster`) and the cluster
 * bench: nodes `agentd serve --postgres URL --node-id ID` on one PostgreSQL database, one
 * shared secret (AGENTD_CLUSTER_SECRET) and one client token, each with its own data dir.
 */
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { startDaemon, type Daemon } from './daemon.js';
import { ROOT } from './util.js';

export interface LocalNode {
  readonly id: string;
  readonly dataDir: string;
  /** The running process, or null when the node is down. */
  readonly daemon: Daemon | null;
  /** `ws://HOST:PORT` of the running process. */
  readonly url: string;
  start(): Promise<void>;
  /** kill -9 (the data dir stays); resolves once the process is gone. */
  kill9(): Promise<void>;
  /** SIGTERM and wait. */
  stop(): Promise<void>;
  healthz(): Promise<{ node_id?: string; sessions_owned?: number; [k: string]: unknown }>;
}

export interface LocalClusterOptions {
  /** PostgreSQL database URL (`--postgres`). */
  postgresUrl: string;
  /** Where the nodes' data dirs go (`DIR/node-ID`). */
  dir: string;
  /** Node ids (default a, b, c). */
  ids?: string[];
  /** Fixed ports, one per node (default: any free port). */
  ports?: number[];
  /** DATA_DIR/config.json of every node. */
  config?: unknown;
  secret?: string;
  token?: string;
  logLevel?: string;
  /** node --cpu-prof etc. */
  nodeArgs?: string[];
}

export interface LocalCluster {
  readonly postgresUrl: string;
  readonly secret: string;
  readonly token: string;
  readonly nodes: LocalNode[];
  node(id: string): LocalNode;
  /** SIGTERM every running node. */
  stop(): Promise<void>;
}

export function createLocalCluster(options: LocalClusterOptions): LocalCluster {
  const secret = options.secret ?? randomBytes(24).toString('hex');
  const token = options.token ?? randomBytes(16).toString('hex');
  const ids = options.ids ?? ['a', 'b', 'c'];
  const nodes = ids.map((id, i): LocalNode => {
    const dataDir = join(options.dir, `node-${id}`);
    mkdirSync(dataDir, { recursive: true, mode: 0o700 });
    let daemon: Daemon | null = null;
    const port = options.ports?.[i];
    const node: LocalNode = {
      id,
      dataDir,
      get daemon() {
        return daemon;
      },
      get url() {
        if (!daemon) throw new Error(`node ${id} is down`);
        return daemon.url;
      },
      async start() {
        if (daemon) throw new Error(`node ${id} is already running`);
        const args = ['--postgres', options.postgresUrl, '--node-id', id];
        if (port !== undefined) args.push('--advertise-url', `ws://127.0.0.1:${port}`);
        daemon = await startDaemon({
          dataDir,
          config: options.config,
          token,
          ...(port !== undefined && { port }),
          args,
          env: { AGENTD_CLUSTER_SECRET: secret, AGENTD_POSTGRES_URL: undefined },
          ...(options.logLevel && { logLevel: options.logLevel }),
          ...(options.nodeArgs && { nodeArgs: options.nodeArgs }),
        });
        const self = daemon;
        void self.exited.then(() => {
          if (daemon === self) daemon = null;
        });
      },
      async kill9() {
        const d = daemon;
        if (!d) return;
        d.proc.kill('SIGKILL');
        await d.exited;
        daemon = null;
      },
      async stop() {
        const d = daemon;
        if (!d) return;
        await d.stop();
        daemon = null;
      },
      async healthz() {
        const res = await fetch(`${node.url.replace(/^ws:/, 'http:')}/healthz`, { signal: AbortSignal.timeout(5000) });
        return (await res.json()) as { node_id?: string; sessions_owned?: number };
      },
    };
    return node;
  });
  return {
    postgresUrl: options.postgresUrl,
    secret,
    token,
    nodes,
    node(id) {
      const n = nodes.find((x) => x.id === id);
      if (!n) throw new Error(`no node ${id}`);
      return n;
    },
    async stop() {
      await Promise.all(nodes.map((n) => n.stop().catch(() => undefined)));
    },
  };
}

/** `agentd cluster status --postgres URL [--json]`: its stdout (throws on a non-zero exit). */
export function clusterStatus(postgresUrl: string, json = false, timeoutMs = 10_000): Promise<string> {
  return new Promise((resolve, reject) => {
    const args = [join(ROOT, 'bin', 'agentd.js'), 'cluster', 'status', '--postgres', postgresUrl, ...(json ? ['--json'] : [])];
    const proc = spawn(process.execPath, args, { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, AGENTD_LOG_LEVEL: 'warn' } });
    let out = '';
    let err = '';
    proc.stdout.on('data', (d: Buffer) => (out += d.toString()));
    proc.stderr.on('data', (d: Buffer) => (err += d.toString()));
    const timer = setTimeout(() => proc.kill('SIGKILL'), timeoutMs);
    proc.once('error', reject);
    proc.once('exit', (code, signal) => {
      clearTimeout(timer);
      if (code === 0) resolve(out);
      else reject(new Error(`agentd cluster status exited with ${signal ?? code}: ${(err || out).trim()}`));
    });
  });
}
