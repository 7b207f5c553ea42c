/**
 * submit_latency: over a real daemon (`agentd serve`, its own process), the time from
 * sending a `submit` (a short message to an idle session, scripted model) to receiving the
 * first batch with an event of that submission. The next submission is sent once the turn
 * has completed. p50 and p99 over 2000 submissions.
 *
 * Baseline, same run: the same submit frame echoed by a raw ws server in its own process.
 * Both are measured in interleaved blocks so machine noise hits them alike.
 */
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { startDaemon } from '../lib/daemon.js';
import type { Measurement, RunOptions, Scenario } from '../lib/scenario.js';
import { Wire, type Frame } from '../lib/wire.js';
import { now, percentile, progress, removeDir, round, ROOT, tempDir } from '../lib/util.js';

async function startEcho(): Promise<{ url: string; stop(): void }> {
  const proc = spawn(process.execPath, [join(ROOT, 'dist', 'bench', 'lib', 'echo-server.js')], { stdio: ['ignore', 'pipe', 'inherit'] });
  const port = await new Promise<number>((resolve, reject) => {
    let out = '';
    proc.stdout!.on('data', (d: Buffer) => {
      out += d.toString();
      const m = /echo listening on (\d+)/.exec(out);
      if (m) resolve(Number(m[1]));
    });
    proc.once('exit', (code) => reject(new Error(`echo server exited with ${code}`)));
  });
  return { url: `ws://127.0.0.1:${port}`, stop: () => proc.kill('SIGTERM') };
}

export const submitLatency: Scenario = {
  name: 'submit_latency',
  what: 'ws submit → first resulting event, p50/p99 over 2000 submissions (real daemon)',
  baselineWhat: 'raw ws echo round trip (separate process)',
  goal: { on: 'ratio', op: '<=', limit: 5, text: 'p99 ratio ≤ 5' },
  async run(options: RunOptions): Promise<Measurement> {
    const total = options.quick ? 300 : 2000;
    const warmup = options.quick ? 50 : 200;
    const blocks = 10;
    const dir = tempDir();
    const daemon = await startDaemon({
      dataDir: dir,
      config: { approval_policy: 'auto' },
      ...(options.profileDir && { nodeArgs: ['--cpu-prof', `--cpu-prof-dir=${options.profileDir}`, '--cpu-prof-name=submit_latency.daemon.cpuprofile'] }),
    });
    const echo = await startEcho();
    try {
      const wire = await Wire.connect(daemon.url);
      const sessionId = await wire.createSession({ cwd: dir, title: 'submit latency' });
      await wire.request({ type: 'attach', session_id: sessionId, replay_batches: 0 });

      // Per submission: time to its first event, then wait for its turn to end.
      let n = 0;
      const submitOnce = async (): Promise<number> => {
        const id = `m${++n}`;
        const hasId = (f: Frame) => f.type === 'batch' && (f.events as Array<{ submission_id: string | null }>).some((e) => e.submission_id === id);
        const first = wire.next(hasId);
        const end = wire.next(
          (f) =>
            (f.type === 'batch' &&
              (f.events as Array<{ submission_id: string | null; msg: { type: string } }>).some(
                (e) => e.submission_id === id && (e.msg.type === 'turn_complete' || e.msg.type === 'turn_failed'),
              )) ||
            (f.type === 'error' && f.submission_id === id),
        );
        const frame = JSON.stringify({ type: 'submit', session_id: sessionId, submission: { id, op: { type: 'message', text: `hello ${n}` } } });
        const t0 = now();
        wire.send(frame);
        await first;
        const dt = now() - t0;
        const f = await end;
        if (f.type === 'error') throw new Error(`submit ${id} failed: ${String(f.message)}`);
        return dt;
      };

      const echoWire = await (async () => {
        const { default: WebSocket } = await import('ws');
        const ws = new WebSocket(echo.url, { perMessageDeflate: false });
        await new Promise<void>((resolve, reject) => {
          ws.once('open', () => resolve());
          ws.once('error', reject);
        });
        return ws;
      })();
      let e = 0;
      const echoOnce = async (): Promise<number> => {
        const frame = JSON.stringify({ type: 'submit', session_id: sessionId, submission: { id: `e${++e}`, op: { type: 'message', text: `hello ${e}` } } });
        const back = new Promise<void>((resolve) => echoWire.once('message', () => resolve()));
        const t0 = now();
        echoWire.send(frame);
        await back;
        return now() - t0;
      };

      progress(`warm-up: ${warmup} submissions and echoes`);
      for (let i = 0; i < warmup; i++) {
        await submitOnce();
        await echoOnce();
      }
      const agentd: number[] = [];
      const raw: number[] = [];
      const per = Math.ceil(total / blocks);
      for (let b = 0; b < blocks; b++) {
        progress(`block ${b + 1}/${blocks}: ${per} submissions, ${per} echoes`);
        for (let i = 0; i < per; i++) agentd.push(await submitOnce());
        for (let i = 0; i < per; i++) raw.push(await echoOnce());
      }
      echoWire.close();
      await wire.close();
      const p50 = percentile(agentd, 50);
      const p99 = percentile(agentd, 99);
      const e50 = percentile(raw, 50);
      const e99 = percentile(raw, 99);
      return {
        value: round(p99, 3),
        unit: 'ms p99',
        baseline: round(e99, 3),
        ratio: round(p99 / e99, 2),
        details: {
          submissions: agentd.length,
          p50_ms: round(p50, 3),
          p99_ms: round(p99, 3),
          max_ms: round(Math.max(...agentd), 3),
          echo_p50_ms: round(e50, 3),
          echo_p99_ms: round(e99, 3),
          p50_ratio: round(p50 / e50, 2),
        },
        note: `p50 ${fmtMs(p50)} vs echo ${fmtMs(e50)} (×${(p50 / e50).toFixed(1)}); p99 ${fmtMs(p99)} vs echo ${fmtMs(e99)}`,
      };
    } finally {
      echo.stop();
      await daemon.stop();
      removeDir(dir);
    }
  },
};

function fmtMs(ms: number): string {
  return `${ms.toFixed(3)} ms`;
}
