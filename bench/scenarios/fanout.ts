/**
 * fanout: one session streams a reply (zero-latency bench model, deltas in bursts) to 100
 * attached WebSocket clients (all in one worker thread, counting batch frames without
 * parsing them); deliveries/s = batch frames received over all clients, from the submit
 * to the last client seeing turn_complete.
 *
 * Baseline, same run: a raw ws server sends the very same frames to 100 clients of the same
 * worker code, as fast as it can (each frame to every client in turn, no flow control).
 */
import { WebSocketServer, type WebSocket } from 'ws';
import { committedRows, startInProcess } from '../lib/inproc.js';
import { deltaModel } from '../lib/models.js';
import type { Measurement, RunOptions, Scenario } from '../lib/scenario.js';
import { startStreamClients } from '../lib/stream-clients.js';
import { median, progress, removeDir, round, tempDir } from '../lib/util.js';
import { BURST } from './journal_stream.js';

interface AgentdRun {
  perSec: number;
  frames: number;
  ms: number;
  bytes: number;
  rows: string[];
  /** Times a client's live stream fell behind and was caught up from the journal (null: not reported). */
  fallbacks: number | null;
}

export async function runAgentd(clients: number, deltas: number): Promise<AgentdRun> {
  const dir = tempDir();
  const app = await startInProcess(dir, { approval_policy: 'auto' }, () => deltaModel({ deltas, burst: BURST }));
  try {
    const sessionId = (await app.host.create({ cwd: dir })).session_id;
    const c = await startStreamClients({ url: app.wsUrl, clients, mode: 'agentd', sessionId, parse: false });
    const r = await c.go();
    await c.close();
    const fallbacks = await app.fallbacks();
    const rows = committedRows(app.host, sessionId).map((row) => row.frame);
    if (r.frames !== rows.length * clients) throw new Error(`agentd delivered ${r.frames} frames, expected ${rows.length} × ${clients}`);
    return {
      perSec: r.frames / (r.ms / 1000),
      frames: r.frames,
      ms: r.ms,
      bytes: r.bytes,
      rows,
      fallbacks,
    };
  } finally {
    await app.close();
    removeDir(dir);
  }
}

export async function runRaw(clients: number, frames: string[]): Promise<{ perSec: number; ms: number }> {
  const wss = new WebSocketServer({ host: '127.0.0.1', port: 0, perMessageDeflate: false, clientTracking: false });
  await new Promise<void>((resolve) => wss.once('listening', () => resolve()));
  const sockets: WebSocket[] = [];
  wss.on('connection', (ws) => {
    sockets.push(ws);
    ws.on('message', () => {
      for (const frame of frames) for (const s of sockets) s.send(frame);
    });
  });
  try {
    const port = (wss.address() as { port: number }).port;
    const c = await startStreamClients({ url: `ws://127.0.0.1:${port}`, clients, mode: 'raw', parse: false });
    const r = await c.go();
    await c.close();
    if (r.frames !== frames.length * clients) throw new Error(`raw fan-out delivered ${r.frames} frames, expected ${frames.length * clients}`);
    return { perSec: r.frames / (r.ms / 1000), ms: r.ms };
  } finally {
    for (const s of sockets) s.terminate();
    wss.close();
  }
}

export const fanout: Scenario = {
  name: 'fanout',
  what: 'one session streaming to 100 attached clients: batch deliveries/s',
  baselineWhat: 'raw ws fan-out of the same frames',
  goal: { on: 'ratio', op: '>=', limit: 0.7, text: 'ratio ≥ 0.7' },
  async run(options: RunOptions): Promise<Measurement> {
    const clients = 100;
    const deltas = options.quick ? 10_000 : 40_000;
    const reps = options.quick ? 1 : 5;
    const a: AgentdRun[] = [];
    const r: Array<Awaited<ReturnType<typeof runRaw>>> = [];
    progress(`warm-up (JIT) of both sides with 5,000 deltas to ${clients} clients`);
    await runRaw(clients, (await runAgentd(clients, 5_000)).rows);
    for (let i = 0; i < reps; i++) {
      progress(`rep ${i + 1}/${reps}: agentd streams ${deltas.toLocaleString('en-US')} deltas to ${clients} clients`);
      const run = await runAgentd(clients, deltas);
      a.push(run);
      progress(`rep ${i + 1}/${reps}: raw fan-out of the same ${run.rows.length} frames to ${clients} clients`);
      r.push(await runRaw(clients, run.rows));
    }
    const value = median(a.map((x) => x.perSec));
    const baseline = median(r.map((x) => x.perSec));
    const a0 = a[0]!;
    const mib = a0.bytes / 2 ** 20;
    return {
      value: Math.round(value),
      unit: 'deliveries/s',
      baseline: Math.round(baseline),
      ratio: round(value / baseline, 3),
      details: {
        clients,
        deltas,
        frames_per_client: a0.rows.length,
        deliveries: a0.frames,
        mib_delivered: round(mib, 1),
        agentd_ms: round(median(a.map((x) => x.ms)), 1),
        raw_ms: round(median(r.map((x) => x.ms)), 1),
        stream_fallbacks: a0.fallbacks,
        reps,
      },
      note:
        `${a0.rows.length} frames × ${clients} clients = ${mib.toFixed(0)} MiB per run` +
        (a0.fallbacks !== null ? `; ${a0.fallbacks} live → catch-up fallbacks` : ''),
    };
  },
};
