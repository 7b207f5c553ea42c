/**
 * cluster_rtt: what a network hop to PostgreSQL costs one node. The same load runs against
 * three daemons in one run, each on a fresh journal:
 *
 * - `sqlite`: one daemon on the embedded journal;
 * - `pg0`: one cluster node (`--postgres`, node id a) on a throwaway PostgreSQL, direct;
 * - `pg2`: the same, but reaching PostgreSQL through a TCP proxy in its own process that
 *   delays every chunk 1 ms each way (`bench/lib/delay-proxy`): 2 ms of round trip, a
 *   database one network hop away. The added round trip is measured (`SELECT 1`, proxy vs
 *   direct) and reported.
 *
 * The load (the issue's): S clients, each with its own session, submit T echo turns one
 * after another (turns/s over all of them, and each turn's submit → `turn_complete`
 * latency), then M sessions stream a `!sleep` turn at once. Meanwhile a prober in its own
 * process (`bench/lib/healthz-probe`) asks `/healthz` every 20 ms, a new connection each.
 *
 * value = pg2's turns/s, baseline = pg0's; goal ratio ≥ 0.7. Also checked (details): pg0 ≥
 * 0.5 × sqlite's turns/s, and `/healthz` p99 ≤ 50 ms in every phase of every backend.
 * Skipped (not failed) when the PostgreSQL binaries are absent.
 */
import { fork, spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import pg from 'pg';
import { createLocalCluster } from '../lib/cluster.js';
import { startDaemon } from '../lib/daemon.js';
import { findPostgres, POSTGRES_MISSING, startPostgres, type PostgresServer } from '../lib/postgres.js';
import { ScenarioSkipped, type Measurement, type RunOptions, type Scenario } from '../lib/scenario.js';
import { median, percentile, progress, removeDir, round, ROOT, tempDir, withTimeout } from '../lib/util.js';
import { Wire, type Frame } from '../lib/wire.js';

const ONE_WAY_DELAY_MS = 1;
const HEALTHZ_GOAL_MS = 50;
const PG2_VS_PG0_GOAL = 0.7;
const PG0_VS_SQLITE_GOAL = 0.5;

type Backend = 'sqlite' | 'pg0' | 'pg2';

interface Load {
  sessions: number;
  turns: number;
  streams: number;
  sleepMs: number;
}

interface HealthPhase {
  n: number;
  p50: number;
  p99: number;
  max: number;
  failed: number;
}

interface Result {
  turnsPerS: number;
  turnP50: number;
  turnP99: number;
  streamDeltas: number;
  streamMs: number;
  health: Record<string, HealthPhase>;
}

const ended = (s: string, id: string) => (f: Frame) =>
  f.type === 'batch' &&
  f.session_id === s &&
  (f.events as Array<{ submission_id?: string; msg: { type: string } }>).some(
    (e) => e.submission_id === id && ['turn_complete', 'turn_failed', 'turn_interrupted'].includes(e.msg.type),
  );

function submit(w: Wire, s: string, id: string, text: string): void {
  w.send({ type: 'submit', session_id: s, submission: { id, op: { type: 'message', text } } });
}

/** The `/healthz` prober process. */
class Prober {
  private readonly proc = fork(join(ROOT, 'dist', 'bench', 'lib', 'healthz-probe.js'), [], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });

  private call<T>(msg: object, until?: string): Promise<T> {
    return new Promise((resolve) => {
      if (!until) {
        this.proc.send(msg);
        return resolve(undefined as T);
      }
      const on = (m: { type: string }) => {
        if (m.type !== until) return;
        this.proc.off('message', on);
        resolve(m as T);
      };
      this.proc.on('message', on);
      this.proc.send(msg);
    });
  }

  start(wsUrl: string): Promise<void> {
    return this.call({ cmd: 'start', url: `${wsUrl.replace(/^ws:/, 'http:')}/healthz`, everyMs: 20 }, 'started');
  }

  phase(name: string): Promise<void> {
    return this.call({ cmd: 'phase', name });
  }

  async report(): Promise<Record<string, HealthPhase>> {
    return (await this.call<{ phases: Record<string, HealthPhase> }>({ cmd: 'report' }, 'report')).phases;
  }

  stop(): Promise<void> {
    return new Promise((resolve) => {
      this.proc.once('exit', () => resolve());
      this.proc.send({ cmd: 'stop' });
    });
  }
}

/** The delay proxy in its own process, in front of `port`. */
async function startProxy(port: number, delayMs: number): Promise<{ port: number; stop(): Promise<void> }> {
  const proc: ChildProcess = spawn(
    process.execPath,
    [join(ROOT, 'dist', 'bench', 'lib', 'delay-proxy.js'), '--to', `127.0.0.1:${port}`, '--delay-ms', String(delayMs)],
    { stdio: ['ignore', 'pipe', 'inherit'] },
  );
  const listening = await new Promise<number>((resolve, reject) => {
    let out = '';
    proc.stdout!.on('data', (d: Buffer) => {
      out += d.toString();
      const m = /proxy listening on (\d+)/.exec(out);
      if (m) resolve(Number(m[1]));
    });
    proc.once('exit', (code) => reject(new Error(`delay proxy exited with ${code}`)));
  });
  return {
    port: listening,
    stop: () =>
      new Promise<void>((resolve) => {
        if (proc.exitCode !== null) return resolve();
        proc.once('exit', () => resolve());
        proc.kill('SIGTERM');
      }),
  };
}

/** Median round trip of `SELECT 1` on one connection to `url`, in ms. */
async function selectRtt(url: string, n: number): Promise<number> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    for (let i = 0; i < 20; i++) await client.query('SELECT 1');
    const ms: number[] = [];
    for (let i = 0; i < n; i++) {
      const t0 = performance.now();
      await client.query('SELECT 1');
      ms.push(performance.now() - t0);
    }
    return median(ms);
  } finally {
    await client.end();
  }
}

const withPort = (url: string, port: number) => url.replace(/:(\d+)\//, `:${port}/`);

/** The load against one daemon at `url`: echo turns, then streaming turns, /healthz probed throughout. */
async function drive(backend: Backend, url: string, token: string, workspace: string, load: Load, prober: Prober): Promise<Result> {
  const clients = await Promise.all(
    Array.from({ length: Math.max(load.sessions, load.streams) }, async () => {
      const w = await Wire.connect(url, token);
      const s = await w.createSession({ cwd: workspace, approval_policy: 'auto' });
      await w.request({ type: 'attach', session_id: s, replay_batches: 0 });
      return { w, s };
    }),
  );
  const turn = async ({ w, s }: { w: Wire; s: string }, id: string, text: string): Promise<number> => {
    const done = w.next(ended(s, id));
    const t0 = performance.now();
    submit(w, s, id, text);
    await done;
    return performance.now() - t0;
  };
  try {
    // Warm-up: one turn per session (JIT, pools, prepared statements).
    await prober.phase(`${backend}:warm`);
    await withTimeout(Promise.all(clients.map((c) => turn(c, 'warm', 'warm up'))), 120_000, `${backend}: warm-up turns`);

    progress(`${backend}: ${load.sessions} sessions × ${load.turns} echo turns`);
    await prober.phase(`${backend}:turns`);
    const latencies: number[] = [];
    const t0 = performance.now();
    await withTimeout(
      Promise.all(
        clients.slice(0, load.sessions).map(async (c) => {
          for (let t = 0; t < load.turns; t++) latencies.push(await turn(c, `t${t}`, `turn ${t} of ${c.s}`));
        }),
      ),
      600_000,
      `${backend}: echo turns`,
    );
    const turnsMs = performance.now() - t0;

    progress(`${backend}: ${load.streams} sessions streaming !sleep ${load.sleepMs}`);
    await prober.phase(`${backend}:stream`);
    let deltas = 0;
    const counters = clients.slice(0, load.streams).map((c) => {
      c.w.onFrame = (f) => {
        if (f.type !== 'batch') return;
        for (const e of f.events as Array<{ msg: { type: string } }>) if (e.msg.type === 'agent_message_delta') deltas++;
      };
      return c;
    });
    const s0 = performance.now();
    await withTimeout(Promise.all(counters.map((c) => turn(c, 'stream', `!sleep ${load.sleepMs}`))), 120_000, `${backend}: streaming turns`);
    const streamMs = performance.now() - s0;
    await prober.phase(`${backend}:after`);
    return {
      turnsPerS: (load.sessions * load.turns) / (turnsMs / 1000),
      turnP50: median(latencies),
      turnP99: percentile(latencies, 99),
      streamDeltas: deltas,
      streamMs,
      health: {},
    };
  } finally {
    await Promise.all(clients.map((c) => c.w.close()));
  }
}

/** One backend: a fresh daemon (and database), the load, the prober's figures for its phases. */
async function runBackend(backend: Backend, env: { dir: string; server: PostgresServer; load: Load; profileDir: string | null }): Promise<Result> {
  const dir = join(env.dir, backend);
  mkdirSync(dir);
  const workspace = join(dir, 'workspace');
  mkdirSync(workspace);
  const config = { approval_policy: 'auto', workspace, limits: { inbox_capacity: 1000 } };
  const nodeArgs = env.profileDir ? ['--cpu-prof', `--cpu-prof-dir=${env.profileDir}`, `--cpu-prof-name=cluster_rtt.${backend}.daemon.cpuprofile`] : undefined;
  const prober = new Prober();
  let proxy: { port: number; stop(): Promise<void> } | null = null;
  let stop: () => Promise<void>;
  let url: string;
  let token: string;
  if (backend === 'sqlite') {
    token = 'bench-token';
    const daemon = await startDaemon({ dataDir: dir, config, token, ...(nodeArgs && { nodeArgs }) });
    url = daemon.url;
    stop = () => daemon.stop();
  } else {
    let postgresUrl = await env.server.createDatabase();
    if (backend === 'pg2') {
      proxy = await startProxy(env.server.port, ONE_WAY_DELAY_MS);
      postgresUrl = withPort(postgresUrl, proxy.port);
    }
    const cl = createLocalCluster({ postgresUrl, dir, ids: ['a'], config, ...(nodeArgs && { nodeArgs }) });
    await cl.node('a').start();
    url = cl.node('a').url;
    token = cl.token;
    stop = () => cl.stop();
  }
  try {
    await prober.start(url);
    const result = await drive(backend, url, token, workspace, env.load, prober);
    const phases = await prober.report();
    for (const [name, h] of Object.entries(phases)) if (name.startsWith(`${backend}:`)) result.health[name.slice(backend.length + 1)] = h;
    return result;
  } finally {
    await prober.stop();
    await stop();
    await proxy?.stop();
  }
}

export const clusterRtt: Scenario = {
  name: 'cluster_rtt',
  what: 'one node, echo turns then streaming turns: turns/s on PostgreSQL behind a 2 ms round trip vs 0 ms (also vs SQLite; /healthz p99)',
  baselineWhat: 'the same load on the same PostgreSQL reached directly (0 ms added)',
  goal: { on: 'ratio', op: '>=', limit: PG2_VS_PG0_GOAL, text: 'ratio ≥ 0.7' },
  async run(options: RunOptions): Promise<Measurement> {
    if (!findPostgres()) throw new ScenarioSkipped(POSTGRES_MISSING);
    const load: Load = options.quick ? { sessions: 10, turns: 5, streams: 10, sleepMs: 1000 } : { sessions: 30, turns: 20, streams: 40, sleepMs: 3000 };
    const dir = tempDir('agentd-bench-rtt-');
    const server = await startPostgres({ maxConnections: 150 });
    try {
      const probeDb = await server.createDatabase();
      const proxy = await startProxy(server.port, ONE_WAY_DELAY_MS);
      const rttDirect = await selectRtt(probeDb, 200);
      const rttProxied = await selectRtt(withPort(probeDb, proxy.port), 200);
      await proxy.stop();
      progress(`SELECT 1 round trip: direct ${round(rttDirect, 3)} ms, through the proxy ${round(rttProxied, 3)} ms`);

      const env = { dir, server, load, profileDir: options.profileDir };
      const r: Partial<Record<Backend, Result>> = {};
      for (const backend of ['sqlite', 'pg0', 'pg2'] as const) {
        r[backend] = await runBackend(backend, env);
        const x = r[backend]!;
        progress(
          `${backend}: ${round(x.turnsPerS, 1)} turns/s, turn p50 ${round(x.turnP50, 1)} ms; ` +
            `/healthz p99 ${Object.entries(x.health).map(([k, h]) => `${k} ${round(h.p99, 1)}`).join(', ')} ms`,
        );
      }
      const { sqlite, pg0, pg2 } = r as Record<Backend, Result>;
      const worstHealth = Math.max(...[sqlite, pg0, pg2].flatMap((x) => Object.values(x.health).map((h) => h.p99)));
      const healthFailed = [sqlite, pg0, pg2].reduce((n, x) => n + Object.values(x.health).reduce((m, h) => m + h.failed, 0), 0);
      const details: Measurement['details'] = {
        rtt_direct_ms: round(rttDirect, 3),
        rtt_proxied_ms: round(rttProxied, 3),
        rtt_added_ms: round(rttProxied - rttDirect, 3),
        sessions: load.sessions,
        turns_per_session: load.turns,
        streaming_sessions: load.streams,
        pg0_vs_sqlite: round(pg0.turnsPerS / sqlite.turnsPerS, 3),
        pg0_vs_sqlite_goal_met: pg0.turnsPerS / sqlite.turnsPerS >= PG0_VS_SQLITE_GOAL,
        healthz_p99_worst_ms: round(worstHealth, 1),
        healthz_goal_met: worstHealth <= HEALTHZ_GOAL_MS && healthFailed === 0,
        healthz_failed: healthFailed,
      };
      for (const [name, x] of Object.entries(r) as Array<[Backend, Result]>) {
        details[`${name}_turns_per_s`] = round(x.turnsPerS, 1);
        details[`${name}_turn_p50_ms`] = round(x.turnP50, 1);
        details[`${name}_turn_p99_ms`] = round(x.turnP99, 1);
        details[`${name}_stream_deltas_per_s`] = round(x.streamDeltas / (x.streamMs / 1000), 0);
        for (const [phase, h] of Object.entries(x.health)) {
          details[`${name}_healthz_${phase}_p99_ms`] = round(h.p99, 1);
          details[`${name}_healthz_${phase}_max_ms`] = round(h.max, 1);
        }
      }
      return {
        value: round(pg2.turnsPerS, 1),
        unit: 'turns/s',
        baseline: round(pg0.turnsPerS, 1),
        ratio: round(pg2.turnsPerS / pg0.turnsPerS, 3),
        details,
        note:
          `turns/s sqlite ${round(sqlite.turnsPerS, 1)} · pg 0 ms ${round(pg0.turnsPerS, 1)} (${details.pg0_vs_sqlite}× sqlite, goal ≥ ${PG0_VS_SQLITE_GOAL}) · ` +
          `pg +${details.rtt_added_ms} ms rtt ${round(pg2.turnsPerS, 1)}; turn p50 ${round(sqlite.turnP50, 1)} / ${round(pg0.turnP50, 1)} / ${round(pg2.turnP50, 1)} ms; ` +
          `/healthz p99 worst ${details.healthz_p99_worst_ms} ms (goal ≤ ${HEALTHZ_GOAL_MS})`,
      };
    } finally {
      await server.stop();
      removeDir(dir);
    }
  },
};
