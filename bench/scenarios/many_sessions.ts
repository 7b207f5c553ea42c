/**
 * many_sessions: N sessions at once, black-box. A fake OpenAI-compatible server in its own
 * process streams every reply as paced SSE (50 chunks/s per stream, `bench/lib/sse-server`);
 * one WebSocket client per session in another process (`bench/lib/many-clients`) submits
 * `stream 100` again as soon as each turn ends and measures each delta's latency from the
 * moment the model server wrote it. N is swept upwards until chunk p99 passes 100 ms; per N:
 * deltas/s, p50/p99, the server process's CPU µs per delta (/proc), its RSS. The same
 * sweep runs against the raw ceiling program (`bench/lib/raw-ceiling`: plain http + SSE,
 * one SQLite transaction per tick for all sessions, ws send) in the same run.
 *
 * Then the mostly-idle shape: N sessions held, each with one short turn (`stream 5`) every
 * 5 s at a random phase; held = chunk p99 ≤ 100 ms and ≥ 90% of the expected turns; CPU
 * per turn. The value is agentd's knee (largest N with p99 ≤ 100 ms), the baseline raw's.
 */
import { fork, spawn, type ChildProcess } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { startDaemon } from '../lib/daemon.js';
import type { Measurement, RunOptions, Scenario } from '../lib/scenario.js';
import { progress, removeDir, round, ROOT, sleep, tempDir } from '../lib/util.js';

const P99_LIMIT_MS = 100;
/** The goal for the daemon's event-loop delay p99 at the streaming knee's load. */
const ELD_P99_LIMIT_MS = 20;
const STREAM_CHUNKS = 100;
const IDLE_PERIOD_MS = 5000;
const IDLE_CHUNKS = 5;

interface Server {
  url: string;
  pid: number;
  /** agentd's /healthz `journal` part (the shared writer, the WAL checkpoints). */
  journalHealth?: () => Promise<unknown>;
  /** Where the process's event-loop delay probe (bench/lib/eld-probe) writes. */
  eldFile: string;
  stop(): Promise<void>;
}

interface Step {
  n: number;
  deltasPerS: number;
  p50: number;
  p99: number;
  cpuUsPerDelta: number;
  cpuMsPerTurn: number;
  turns: number;
  failures: number;
  rssMiB: number;
  /** The server process's event-loop delay over the window (monitorEventLoopDelay, ms). */
  eldP99: number;
  eldMax: number;
  held: boolean;
}

/** Spawn a bench helper process and wait for its "… listening on PORT" line. */
async function spawnListening(args: string[], pattern: RegExp, env: Record<string, string> = {}): Promise<{ proc: ChildProcess; port: number }> {
  const proc = spawn(process.execPath, args, { cwd: ROOT, stdio: ['ignore', 'pipe', 'inherit'], env: { ...process.env, ...env } });
  const port = await new Promise<number>((resolve, reject) => {
    let out = '';
    proc.stdout!.on('data', (d: Buffer) => {
      out += d.toString();
      const m = pattern.exec(out);
      if (m) resolve(Number(m[1]));
    });
    proc.once('exit', (code) => reject(new Error(`${args[0]} exited with ${code}`)));
  });
  return { proc, port };
}

const stopProc = (proc: ChildProcess) =>
  new Promise<void>((resolve) => {
    if (proc.exitCode !== null || proc.signalCode !== null) return resolve();
    proc.once('exit', () => resolve());
    proc.kill('SIGTERM');
  });

/** utime + stime of a process, in ms (from /proc; 10 ms resolution). */
function cpuMs(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return ((Number(fields[11]) + Number(fields[12])) * 1000) / 100;
}

function rssMiB(pid: number): number {
  const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return m ? Number(m[1]) / 1024 : NaN;
}

const ELD_PROBE = join(ROOT, 'dist', 'bench', 'lib', 'eld-probe.js');

/**
 * Ask the server's event-loop delay probe for its histogram since the last ask (SIGUSR2)
 * and wait for the file it writes: the first call of a window resets, the second reads.
 */
async function readEventLoopDelay(server: Server): Promise<{ p99_ms: number; max_ms: number } | null> {
  const before = existsSync(server.eldFile) ? (JSON.parse(readFileSync(server.eldFile, 'utf8')) as { seq: number }).seq : 0;
  process.kill(server.pid, 'SIGUSR2');
  const deadline = Date.now() + 5000;
  while (Date.now() < deadline) {
    if (existsSync(server.eldFile)) {
      const r = JSON.parse(readFileSync(server.eldFile, 'utf8')) as { seq: number; p99_ms: number; max_ms: number };
      if (r.seq > before) return r;
    }
    await sleep(20);
  }
  return null;
}

/** The clients process, driven over IPC. */
class Clients {
  private readonly proc = fork(join(ROOT, 'dist', 'bench', 'lib', 'many-clients.js'), [], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });

  call(msg: object, until: string, onMessage?: (m: { type: string; edge?: string }) => void): Promise<Record<string, number>> {
    return new Promise((resolve, reject) => {
      const listener = (m: Record<string, unknown>) => {
        onMessage?.(m as { type: string });
        if (m.type === 'error') {
          this.proc.off('message', listener);
          reject(new Error(`clients: ${String(m.message)}`));
        } else if (m.type === until) {
          this.proc.off('message', listener);
          resolve(m as Record<string, number>);
        }
      };
      this.proc.on('message', listener);
      this.proc.send(msg);
    });
  }

  close(): Promise<void> {
    return stopProc(this.proc);
  }
}

/** One measured window at the current N: latency from the clients, CPU and RSS of the server process. */
async function measureStep(
  clients: Clients,
  server: Server,
  n: number,
  load: { chunks: number; periodMs: number },
  timing: { warmMs: number; measureMs: number },
): Promise<Step> {
  let cpu0 = 0;
  let cpu1 = 0;
  let eld: Promise<{ p99_ms: number; max_ms: number } | null> = Promise.resolve(null);
  const m = await clients.call({ cmd: 'measure', ms: timing.measureMs }, 'measured', (e) => {
    if (e.type === 'window' && e.edge === 'start') {
      cpu0 = cpuMs(server.pid);
      void readEventLoopDelay(server);
    }
    if (e.type === 'window' && e.edge === 'end') {
      cpu1 = cpuMs(server.pid);
      eld = readEventLoopDelay(server);
    }
  });
  const delay = await eld;
  const cpu = cpu1 - cpu0;
  const expectedTurns = load.periodMs ? (n * timing.measureMs) / load.periodMs : 0;
  return {
    n,
    deltasPerS: round((m.deltas! * 1000) / timing.measureMs, 0),
    p50: round(m.p50!, 1),
    p99: round(m.p99!, 1),
    cpuUsPerDelta: round((cpu * 1000) / Math.max(1, m.deltas!), 1),
    cpuMsPerTurn: round(cpu / Math.max(1, m.turns!), 3),
    turns: m.turns!,
    failures: m.failures!,
    rssMiB: round(rssMiB(server.pid), 0),
    eldP99: delay?.p99_ms ?? NaN,
    eldMax: delay?.max_ms ?? NaN,
    held: Number.isFinite(m.p99) && m.p99! <= P99_LIMIT_MS && m.failures === 0 && (!load.periodMs || m.turns! >= 0.9 * expectedTurns),
  };
}

/** One sweep of N against one server: grow, warm up, measure; stop at the first N not held. */
async function sweep(
  side: string,
  server: Server,
  ns: number[],
  load: { chunks: number; periodMs: number },
  timing: { warmMs: number; measureMs: number },
  cwd: string,
): Promise<Step[]> {
  const clients = new Clients();
  const steps: Step[] = [];
  try {
    for (const [i, n] of ns.entries()) {
      await clients.call({ cmd: 'grow', url: server.url, n, cwd, load }, 'grown');
      // The first step also warms the server up (JIT, caches, the model connections).
      await sleep(i === 0 ? 3 * timing.warmMs : timing.warmMs);
      let step = await measureStep(clients, server, n, load, timing);
      // A step not held is measured once more: one pause of the shared machine would
      // otherwise end the sweep (both sides get the same second chance).
      if (!step.held) {
        progress(`${side} N=${n}: p99 ${step.p99} ms, measuring once more`);
        step = await measureStep(clients, server, n, load, timing);
      }
      steps.push(step);
      progress(
        `${side} N=${n}: ${step.deltasPerS} deltas/s, p50 ${step.p50} ms, p99 ${step.p99} ms, ` +
          `${load.periodMs ? `${step.cpuMsPerTurn} ms CPU/turn, ${step.turns} turns` : `${step.cpuUsPerDelta} µs CPU/delta`}, ` +
          `RSS ${step.rssMiB} MiB, event-loop delay p99 ${step.eldP99} ms${step.failures ? `, ${step.failures} failed` : ''}${step.held ? '' : '  ← past the knee'}`,
      );
      if (server.journalHealth) progress(`${side} N=${n}: journal ${JSON.stringify(await server.journalHealth())}`);
      if (!step.held) break;
    }
    await clients.call({ cmd: 'stop' }, 'stopped');
  } finally {
    await clients.close();
  }
  return steps;
}

async function startAgentd(ssePort: number, dir: string, profileDir: string | null, shape: string): Promise<Server> {
  const eldFile = join(dir, 'eld.json');
  const daemon = await startDaemon({
    env: { AGENTD_BENCH_ELD_FILE: eldFile },
    dataDir: dir,
    config: {
      approval_policy: 'auto',
      models: { default: 'fake', routes: { fake: { provider: 'openai', model: 'fake', base_url: `http://127.0.0.1:${ssePort}/v1` } } },
      server: { max_connections: 30_000, max_unauthenticated: 30_000 },
      limits: { evict_idle_ms: 600_000 },
    },
    nodeArgs: ['--import', ELD_PROBE, ...(profileDir ? ['--cpu-prof', `--cpu-prof-dir=${profileDir}`, `--cpu-prof-name=many_sessions.${shape}.daemon.cpuprofile`] : [])],
  });
  // A daemon far past its knee may answer /healthz late or cut: that step reports no journal health.
  const journalHealth = async () => {
    try {
      return ((await (await fetch(`${daemon.url.replace(/^ws:/, 'http:')}/healthz`)).json()) as { journal?: unknown }).journal ?? null;
    } catch (err) {
      return { unavailable: (err as Error).message };
    }
  };
  return { url: `${daemon.url}/v1`, pid: daemon.proc.pid!, journalHealth, eldFile, stop: () => daemon.stop() };
}

async function startRaw(ssePort: number, dir: string): Promise<Server> {
  const eldFile = join(dir, 'eld.json');
  const { proc, port } = await spawnListening(
    ['--import', ELD_PROBE, join(ROOT, 'dist', 'bench', 'lib', 'raw-ceiling.js'), '--sse', String(ssePort), '--db', join(dir, 'raw.db')],
    /raw listening on (\d+)/,
    { AGENTD_BENCH_ELD_FILE: eldFile },
  );
  return { url: `ws://127.0.0.1:${port}`, pid: proc.pid!, eldFile, stop: () => stopProc(proc) };
}

async function sseStats(port: number): Promise<{ connections: number; requests: number }> {
  return (await (await fetch(`http://127.0.0.1:${port}/stats`)).json()) as { connections: number; requests: number };
}

const knee = (steps: Step[]) => steps.filter((s) => s.held).reduce((k, s) => Math.max(k, s.n), 0);
/** The step measured at the knee (the largest N held). */
const atKnee = (steps: Step[]) => steps.find((s) => s.held && s.n === knee(steps));

export const manySessions: Scenario = {
  name: 'many_sessions',
  what: 'N sessions streaming paced SSE (50 chunks/s) to one ws client each: largest N with chunk p99 ≤ 100 ms',
  baselineWhat: 'raw ceiling: plain http + SSE, one SQLite transaction per tick, ws send (own process)',
  goal: { on: 'ratio', op: '>=', limit: 0.7, text: 'knee ratio ≥ 0.7' },
  async run(options: RunOptions): Promise<Measurement> {
    // AGENTD_BENCH_STREAM_NS / AGENTD_BENCH_IDLE_NS ("100,200"; "" skips the shape): other sweeps while profiling.
    const list = (v: string | undefined, d: number[]) => (v === undefined ? d : v.split(',').filter(Boolean).map(Number));
    const streamNs = list(process.env.AGENTD_BENCH_STREAM_NS, options.quick ? [25, 50, 100] : [25, 50, 100, 150, 200, 300, 400, 500, 600, 800, 1000]);
    const idleNs = list(process.env.AGENTD_BENCH_IDLE_NS, options.quick ? [200, 400] : [1000, 2000, 3000, 4000, 6000, 8000]);
    const streamTiming = options.quick ? { warmMs: 1000, measureMs: 2000 } : { warmMs: 1500, measureMs: 3000 };
    const idleTiming = options.quick ? { warmMs: 3000, measureMs: 5000 } : { warmMs: IDLE_PERIOD_MS, measureMs: IDLE_PERIOD_MS * 2 };
    const sse = await spawnListening([join(ROOT, 'dist', 'bench', 'lib', 'sse-server.js')], /sse listening on (\d+)/);
    const dirs: string[] = [];
    const results: Record<string, { stream: Step[]; idle: Step[] }> = {};
    const connections: Record<string, number> = {};
    try {
      for (const side of ['agentd', 'raw'] as const) {
        for (const shape of ['stream', 'idle'] as const) {
          if ((shape === 'stream' ? streamNs : idleNs).length === 0) continue;
          const dir = tempDir();
          dirs.push(dir);
          const before = await sseStats(sse.port);
          const server = side === 'agentd' ? await startAgentd(sse.port, dir, options.profileDir, shape) : await startRaw(sse.port, dir);
          try {
            const steps =
              shape === 'stream'
                ? await sweep(side, server, streamNs, { chunks: STREAM_CHUNKS, periodMs: 0 }, streamTiming, dir)
                : await sweep(`${side} idle`, server, idleNs, { chunks: IDLE_CHUNKS, periodMs: IDLE_PERIOD_MS }, idleTiming, dir);
            (results[side] ??= { stream: [], idle: [] })[shape] = steps;
          } finally {
            await server.stop();
          }
          const after = await sseStats(sse.port);
          connections[`model_tcp_connections_${side}_${shape}`] = after.connections - before.connections;
          connections[`model_requests_${side}_${shape}`] = after.requests - before.requests;
        }
      }
      const stats = await sseStats(sse.port);
      const a = results.agentd!;
      const r = results.raw!;
      const kneeA = knee(a.stream);
      const kneeR = knee(r.stream);
      const at50 = (steps: Step[]) => steps.find((s) => s.n === 50);
      const idleA = knee(a.idle);
      const idleR = knee(r.idle);
      const details: Measurement['details'] = {
        knee_agentd: kneeA,
        knee_raw: kneeR,
        p99_n50_agentd_ms: at50(a.stream)?.p99 ?? null,
        p99_n50_raw_ms: at50(r.stream)?.p99 ?? null,
        p99_n50_ratio: at50(a.stream) && at50(r.stream) ? round(at50(a.stream)!.p99 / at50(r.stream)!.p99, 2) : null,
        cpu_us_per_delta_n50_agentd: at50(a.stream)?.cpuUsPerDelta ?? null,
        cpu_us_per_delta_n50_raw: at50(r.stream)?.cpuUsPerDelta ?? null,
        idle_held_agentd: idleA,
        idle_held_raw: idleR,
        idle_ratio: idleR ? round(idleA / idleR, 2) : null,
        idle_cpu_ms_per_turn_agentd: a.idle[0]?.cpuMsPerTurn ?? null,
        idle_cpu_ms_per_turn_raw: r.idle[0]?.cpuMsPerTurn ?? null,
        event_loop_delay_p99_ms_at_knee_agentd: atKnee(a.stream)?.eldP99 ?? null,
        event_loop_delay_max_ms_at_knee_agentd: atKnee(a.stream)?.eldMax ?? null,
        event_loop_delay_p99_ms_at_knee_raw: atKnee(r.stream)?.eldP99 ?? null,
        event_loop_delay_p99_goal_met: (atKnee(a.stream)?.eldP99 ?? Infinity) <= ELD_P99_LIMIT_MS,
        sweep_top_reached_agentd: kneeA === streamNs.at(-1)!,
        sweep_top_reached_raw: kneeR === streamNs.at(-1)!,
        ...connections,
        steps: JSON.stringify(results),
      };
      return {
        value: kneeA,
        unit: 'sessions',
        baseline: kneeR,
        ratio: kneeR ? round(kneeA / kneeR, 3) : 0,
        details,
        note:
          `p99 at N=50 ${details.p99_n50_agentd_ms} vs ${details.p99_n50_raw_ms} ms (${details.p99_n50_ratio}×); ` +
          `idle held ${idleA} vs ${idleR} (${details.idle_ratio}); event-loop delay p99 at the knee ${details.event_loop_delay_p99_ms_at_knee_agentd} ms (goal ≤ ${ELD_P99_LIMIT_MS}); ${stats.connections} model TCP connections for ${stats.requests} requests`,
      };
    } finally {
      await stopProc(sse.proc);
      for (const d of dirs) removeDir(d);
    }
  },
};
