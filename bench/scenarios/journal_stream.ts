/**
 * journal_stream: one session streams N model deltas (zero-latency bench model, deltas
 * arriving in bursts like SSE chunks of one socket read); events/s committed to the journal
 * and delivered to one WebSocket client (in a worker thread), from its submit to its
 * turn_complete.
 *
 * Baseline, same run: the very rows agentd committed (same batch sizes, same JSON) inserted
 * with raw better-sqlite3 (one transaction per batch, WAL, synchronous=NORMAL) and each
 * sent with raw ws to the same client code.
 */
import Database from 'better-sqlite3';
import { join } from 'node:path';
import { WebSocketServer } from 'ws';
import { committedRows, startInProcess, type JournalRow as Row } from '../lib/inproc.js';
import { deltaModel } from '../lib/models.js';
import type { Measurement, RunOptions, Scenario } from '../lib/scenario.js';
import { startStreamClients } from '../lib/stream-clients.js';
import { median, now, progress, removeDir, round, tempDir } from '../lib/util.js';

interface AgentdRun {
  eventsPerSec: number;
  events: number;
  ms: number;
  commitSpanMs: number;
  rows: Row[];
  sessionId: string;
  fallbacks: number | null;
}

export const BURST = 16;

export async function runAgentd(deltas: number, burst = BURST): Promise<AgentdRun> {
  const dir = tempDir();
  const app = await startInProcess(dir, { approval_policy: 'auto' }, () => deltaModel({ deltas, burst }));
  try {
    const sessionId = (await app.host.create({ cwd: dir })).session_id;
    let first = 0;
    let last = 0;
    (await app.host.open(sessionId))!.subscribe(() => {
      last = now();
      if (!first) first = last;
    });
    const clients = await startStreamClients({ url: app.wsUrl, clients: 1, mode: 'agentd', sessionId, parse: true });
    const r = await clients.go();
    await clients.close();
    const fallbacks = await app.fallbacks();
    const rows = committedRows(app.host, sessionId);
    return {
      eventsPerSec: r.events / (r.ms / 1000),
      events: r.events,
      ms: r.ms,
      commitSpanMs: last - first,
      rows,
      sessionId,
      fallbacks,
    };
  } finally {
    await app.close();
    removeDir(dir);
  }
}

export async function runRaw(rows: Row[], sessionId: string, events: number): Promise<{ eventsPerSec: number; ms: number }> {
  const dir = tempDir();
  const db = new Database(join(dir, 'raw.db'));
  db.pragma('journal_mode = WAL');
  db.pragma('synchronous = NORMAL');
  db.exec(`CREATE TABLE batches (
    session_id TEXT NOT NULL, sequence INTEGER NOT NULL, committed_at INTEGER NOT NULL, events TEXT NOT NULL,
    PRIMARY KEY (session_id, sequence))`);
  const insert = db.prepare('INSERT INTO batches (session_id, sequence, committed_at, events) VALUES (?, ?, ?, ?)');
  const commit = db.transaction((row: Row) => insert.run(sessionId, row.sequence, row.committed_at, row.events));
  const wss = new WebSocketServer({ host: '127.0.0.1', port: 0, perMessageDeflate: false });
  await new Promise<void>((resolve) => wss.once('listening', () => resolve()));
  wss.on('connection', (ws) => {
    ws.on('message', () => {
      for (const row of rows) {
        commit(row);
        ws.send(row.frame);
      }
    });
  });
  try {
    const port = (wss.address() as { port: number }).port;
    const clients = await startStreamClients({ url: `ws://127.0.0.1:${port}`, clients: 1, mode: 'raw', parse: true });
    const r = await clients.go();
    await clients.close();
    if (r.events !== events) throw new Error(`raw baseline delivered ${r.events} events, expected ${events}`);
    return { eventsPerSec: r.events / (r.ms / 1000), ms: r.ms };
  } finally {
    wss.close();
    db.close();
    removeDir(dir);
  }
}

export const journalStream: Scenario = {
  name: 'journal_stream',
  what: 'one session streaming 200k model deltas: events/s committed and delivered to one ws client',
  baselineWhat: 'raw better-sqlite3 insert of the same rows in the same batch sizes + raw ws send',
  goal: { on: 'ratio', op: '>=', limit: 0.5, text: 'ratio ≥ 0.5' },
  async run(options: RunOptions): Promise<Measurement> {
    const deltas = options.quick ? 20_000 : 200_000;
    const reps = options.quick ? 1 : 5;
    const agentd: AgentdRun[] = [];
    const raw: Array<{ eventsPerSec: number; ms: number }> = [];
    progress('warm-up (JIT) of both sides with 20,000 deltas');
    const w = await runAgentd(20_000);
    await runRaw(w.rows, w.sessionId, w.events);
    for (let i = 0; i < reps; i++) {
      progress(`rep ${i + 1}/${reps}: agentd streams ${deltas.toLocaleString('en-US')} deltas`);
      const a = await runAgentd(deltas);
      agentd.push(a);
      progress(`rep ${i + 1}/${reps}: raw sqlite + ws with the same ${a.rows.length} batches`);
      raw.push(await runRaw(a.rows, a.sessionId, a.events));
    }
    const value = median(agentd.map((a) => a.eventsPerSec));
    const baseline = median(raw.map((r) => r.eventsPerSec));
    const a0 = agentd[0]!;
    return {
      value: Math.round(value),
      unit: 'events/s',
      baseline: Math.round(baseline),
      ratio: round(value / baseline, 3),
      details: {
        deltas,
        delta_burst: BURST,
        events: a0.events,
        batches: a0.rows.length,
        events_per_batch: round(a0.events / a0.rows.length, 1),
        agentd_ms: round(median(agentd.map((a) => a.ms)), 1),
        agentd_commit_span_ms: round(median(agentd.map((a) => a.commitSpanMs)), 1),
        raw_ms: round(median(raw.map((r) => r.ms)), 1),
        max_frame_kib: round(Math.max(...a0.rows.map((r) => r.frame.length)) / 1024, 1),
        stream_fallbacks: a0.fallbacks,
        reps,
      },
      note: `${a0.events.toLocaleString('en-US')} events in ${a0.rows.length} batches (~${Math.round(a0.events / a0.rows.length)}/batch)`,
    };
  },
};
