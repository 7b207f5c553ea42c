/**
 * Probes a daemon's `/healthz` from its own process (forked, IPC) every few milliseconds,
 * as a load balancer would, so that the latency measured is the daemon's and not the
 * benchmark's own event loop: one request at a time, a new connection each, the time from
 * the request to the whole body. Samples are kept per phase (the scenario names them).
 *
 * IPC in: {cmd:'start', url, everyMs} · {cmd:'phase', name} · {cmd:'report'} · {cmd:'stop'}.
 * IPC out: {type:'started'} · {type:'report', phases: {NAME: {n, p50, p99, max, failed}}}.
 */
import { request } from 'node:http';

let url = '';
let everyMs = 20;
let phase = 'idle';
let running = false;
const samples = new Map<string, { ms: number[]; failed: number }>();

function probeOnce(): Promise<number | null> {
  return new Promise((resolve) => {
    const t0 = performance.now();
    const req = request(url, { agent: false, timeout: 10_000 }, (res) => {
      res.resume();
      res.on('end', () => resolve(res.statusCode === 200 ? performance.now() - t0 : null));
      res.on('error', () => resolve(null));
    });
    req.on('timeout', () => req.destroy(new Error('timeout')));
    req.on('error', () => resolve(null));
    req.end();
  });
}

async function loop(): Promise<void> {
  while (running) {
    const started = performance.now();
    const label = phase;
    const ms = await probeOnce();
    const into = samples.get(label) ?? { ms: [], failed: 0 };
    samples.set(label, into);
    if (ms === null) into.failed++;
    else into.ms.push(ms);
    const wait = everyMs - (performance.now() - started);
    if (wait > 0) await new Promise((r) => setTimeout(r, wait));
  }
}

function pct(sorted: number[], p: number): number {
  if (sorted.length === 0) return NaN;
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))]!;
}

process.on('message', (msg: { cmd: string; url?: string; everyMs?: number; name?: string }) => {
  if (msg.cmd === 'start') {
    url = msg.url!;
    everyMs = msg.everyMs ?? 20;
    running = true;
    void loop();
    process.send!({ type: 'started' });
  } else if (msg.cmd === 'phase') {
    phase = msg.name!;
  } else if (msg.cmd === 'report') {
    const phases: Record<string, { n: number; p50: number; p99: number; max: number; failed: number }> = {};
    for (const [name, s] of samples) {
      const sorted = [...s.ms].sort((a, b) => a - b);
      phases[name] = { n: sorted.length, p50: pct(sorted, 50), p99: pct(sorted, 99), max: sorted.at(-1) ?? NaN, failed: s.failed };
    }
    process.send!({ type: 'report', phases });
  } else if (msg.cmd === 'stop') {
    running = false;
    process.exit(0);
  }
});
