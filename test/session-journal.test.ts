/** The journal under the runtime: gap-free batches, durable idempotent admission, commit failures. */
import Database from 'better-sqlite3';
import { join } from 'node:path';
import { afterEach, describe, expect, test } from 'vitest';
import { Journal } from '../src/journal/journal.js';
import { SCHEMA_VERSION } from '../src/journal/migrations.js';
import { cleanup, msg, openHost, terminalCount, Watcher, type Harness } from './helpers/session.js';

let h: Harness | undefined;
afterEach(async () => {
  if (h) {
    await h.close().catch(() => {});
    cleanup(h.dir);
    h = undefined;
  }
});

async function start(config: object = { approval_policy: 'auto' }) {
  h = await openHost(config);
  const d = await h.host.create({ cwd: h.dir });
  const s = (await h.host.open(d.session_id))!;
  return { s, w: new Watcher(s), id: d.session_id };
}

describe('journal', () => {
  test('batches are gap-free from 1 and replay equals the live stream', async () => {
    const { s, w, id } = await start();
    for (let i = 0; i < 5; i++) s.submit(msg(`m${i} ${'x'.repeat(200)}`));
    s.submit(msg('!sh seq 1 200'));
    await w.next('turn_complete', 6);
    const stored = (await h!.host.readAfter(id, 0, 10_000));
    expect(stored.map((b) => b.sequence)).toEqual(stored.map((_, i) => i + 1));
    // The live stream (after the creation batch) is exactly what the journal holds.
    expect(w.batches.map((b) => b.frame)).toEqual(stored.slice(1).map((b) => b.frame));
    expect(JSON.parse(stored[0]!.frame)).toMatchObject({ type: 'batch', session_id: id, sequence: 1 });
    expect(stored[0]!.events[0]!.msg.type).toBe('session_configured');
    // Group commit: deltas share batches.
    expect(stored.length).toBeLessThan(w.events.length);
    expect(terminalCount(w.events)).toBe(6);
  });

  test('readBefore pages backwards', async () => {
    const { s, w, id } = await start();
    for (let i = 0; i < 3; i++) s.submit(msg(`m${i}`));
    await w.next('turn_complete', 3);
    const head = s.headSequence();
    const page = (await h!.host.readBefore(id, head + 1, 2));
    expect(page.map((b) => b.sequence)).toEqual([head - 1, head]);
    expect((await h!.host.readBefore(id, 3, 100)).map((b) => b.sequence)).toEqual([1, 2]);
  });

  test('message admission is idempotent, also after reopening the database', async () => {
    const { s, w, id } = await start();
    const outcomes: string[] = [];
    s.submit(msg('once', undefined, 'dup-1'), (o) => outcomes.push(o));
    await w.next('turn_complete');
    s.submit(msg('once', undefined, 'dup-1'), (o) => outcomes.push(o));
    await new Promise((r) => setTimeout(r, 50));
    expect(outcomes).toEqual(['accepted', 'already_accepted']);
    const head = s.headSequence();
    await h!.close();
    const host = await h!.reopen();
    const again = (await host.open(id))!;
    const later: string[] = [];
    again.submit(msg('once', undefined, 'dup-1'), (o) => later.push(o));
    await new Promise((r) => setTimeout(r, 50));
    expect(later).toEqual(['already_accepted']);
    expect(again.headSequence()).toBe(head);
    expect(w.count('user_message')).toBe(1);
  });

  test('schema migrations are recorded in a version table', async () => {
    const { id } = await start();
    const db = new Database(join(h!.dir, 'agentd.db'), { readonly: true });
    const versions = db.prepare('SELECT version FROM schema_migrations ORDER BY version').pluck().all();
    expect(versions).toEqual(Array.from({ length: SCHEMA_VERSION }, (_, i) => i + 1));
    expect(db.pragma('journal_mode', { simple: true })).toBe('wal');
    expect(db.prepare('SELECT head_sequence FROM sessions WHERE session_id = ?').pluck().get(id)).toBe(1);
    db.close();
  });

  test('synchronous is configurable', async () => {
    const dir = join((await start()).w.session.id, '..');
    void dir;
    const j = new Journal(join(h!.dir, 'other.db'), { synchronous: 'FULL' });
    expect(j.db.pragma('synchronous', { simple: true })).toBe(2);
    j.close();
    const n = new Journal(join(h!.dir, 'other2.db'));
    expect(n.db.pragma('synchronous', { simple: true })).toBe(1);
    n.close();
  });

  test('a database from a newer agentd is refused with a clear error', async () => {
    await start();
    const path = join(h!.dir, 'newer.db');
    const j = new Journal(path);
    j.db.prepare('INSERT INTO schema_migrations (version, applied_at) VALUES (?, ?)').run(SCHEMA_VERSION + 1, 0);
    j.close();
    expect(() => new Journal(path)).toThrow(/newer than this agentd/);
  });
});

describe('commit failures', () => {
  test('a failed commit rolls back to the last checkpoint and fails the turn; the session goes on', async () => {
    const { s, w, id } = await start();
    s.submit(msg('before'));
    await w.next('turn_complete');
    const usageBefore = s.state.usage_total;
    // Any batch holding a full agent_message fails, as a full disk would.
    h!.host.journal.withDatabase((d) => d).exec(`CREATE TEMP TRIGGER fail_reply BEFORE INSERT ON batches WHEN NEW.events LIKE '%"type":"agent_message"%'
      BEGIN SELECT RAISE(ABORT, 'database or disk is full (simulated)'); END;`);
    s.submit(msg('doomed'));
    const failed = await w.next('turn_failed');
    expect(failed.error.code).toBe('journal_write_failed');
    expect(failed.error.message).toContain('disk is full');
    expect(s.state.usage_total).toEqual(usageBefore);
    expect(s.descriptor().status).toBe('idle');
    h!.host.journal.withDatabase((d) => d).exec('DROP TRIGGER fail_reply');
    s.submit(msg('after'));
    expect((await w.next('turn_complete', 2)).last_message).toBe('echo: after');
    const stored = (await h!.host.readAfter(id, 0, 1000));
    expect(stored.map((b) => b.sequence)).toEqual(stored.map((_, i) => i + 1));
    const events = stored.flatMap((b) => b.events);
    expect(events.filter((e) => e.msg.type === 'agent_message').map((e) => (e.msg as { text: string }).text)).toEqual([
      'echo: before',
      'echo: after',
    ]);
    expect(terminalCount(events)).toBe(events.filter((e) => e.msg.type === 'turn_started').length);
    // The model context was rolled back too: the doomed reply is not in it.
    const transcript = h!.host.journal.loadTranscript(id).map((t) => JSON.parse(t));
    expect(transcript.some((t: { text?: string }) => t.text === 'echo: doomed')).toBe(false);
  });

  test('a read-only database: the message is not admitted, the session stops, others keep running, recovery later', async () => {
    const { s, w, id } = await start();
    const other = await h!.host.create({ cwd: h!.dir });
    s.submit(msg('!sleep 100'));
    await w.next('turn_started');
    h!.host.journal.withDatabase((d) => d).pragma('query_only = ON');
    const rejected: string[] = [];
    s.submit(msg('lost?', undefined, 'ro-1'), undefined, (m) => rejected.push(m));
    await new Promise((r) => setTimeout(r, 300));
    expect(rejected).toHaveLength(1);
    expect(rejected[0]).toContain('readonly');
    expect(s.submit(msg('x')).ok).toBe(false);
    expect(h!.host.isResident(id)).toBe(false);
    // The daemon goes on: reads work, other sessions answer.
    expect((await h!.host.list({ limit: 10 })).sessions).toHaveLength(2);
    h!.host.journal.withDatabase((d) => d).pragma('query_only = OFF');
    const o = (await h!.host.open(other.session_id))!;
    const ow = new Watcher(o);
    o.submit(msg('still here'));
    expect((await ow.next('turn_complete')).last_message).toBe('echo: still here');
    // The stopped session hydrates again and its open turn is recovered.
    const again = (await h!.host.open(id))!;
    const aw = new Watcher(again);
    await aw.next('turn_complete');
    const all = (await h!.host.readAfter(id, 0, 1000)).flatMap((b) => b.events);
    expect(all.filter((e) => e.msg.type === 'turn_resumed')).toHaveLength(1);
    expect(all.some((e) => e.submission_id === 'ro-1')).toBe(false);
    expect(terminalCount(all)).toBe(1);
  });
});

describe('a full disk', () => {
  test('SQLITE_FULL: the message is refused, nothing is half-written, the session goes on once there is room', async () => {
    const { s, w, id } = await start();
    s.submit(msg('warm up'));
    await w.next('turn_complete');
    const db = h!.host.journal.withDatabase((d) => d);
    db.pragma('wal_checkpoint(TRUNCATE)');
    const pages = db.pragma('page_count', { simple: true }) as number;
    const headBefore = s.headSequence();
    // The database may not grow any more: the next big write fails with SQLITE_FULL.
    db.pragma(`max_page_count = ${pages}`);
    const rejected: string[] = [];
    const admitted: string[] = [];
    s.submit(msg('y'.repeat(200 * 1024), undefined, 'big-1'), (o) => admitted.push(o), (m) => rejected.push(m));
    await new Promise((r) => setTimeout(r, 300));
    expect(admitted).toEqual([]);
    expect(rejected).toHaveLength(1);
    expect(rejected[0]).toMatch(/full/i);
    expect(s.headSequence()).toBe(headBefore);
    expect(s.descriptor()).toMatchObject({ status: 'idle', active_turn_id: null });
    expect((await h!.host.readAfter(id, 0, 10_000)).flatMap((b) => b.events).some((e) => e.submission_id === 'big-1')).toBe(false);
    // Room again: the same message, retried, is admitted once and answered.
    db.pragma('max_page_count = 1073741823');
    s.submit(msg('y'.repeat(200 * 1024), undefined, 'big-1'), (o) => admitted.push(o));
    await w.next('turn_complete', 2, 20_000);
    expect(admitted).toEqual(['accepted']);
    const all = (await h!.host.readAfter(id, 0, 10_000));
    expect(all.map((b) => b.sequence)).toEqual(all.map((_, i) => i + 1));
  });
});

describe('batch size', () => {
  test('a long reply is split into batches of bounded size, never one giant frame', async () => {
    const { s, w, id } = await start();
    const text = 'x'.repeat(300 * 1024);
    s.submit(msg(text));
    await w.next('turn_complete', 1, 20_000);
    const frames = (await h!.host.readAfter(id, 0, 10_000)).map((b) => b.frame);
    expect(frames.length).toBeGreaterThan(8);
    const deltaOnly = (await h!.host.readAfter(id, 0, 10_000))
      .filter((b) => b.events.every((e) => e.msg.type === 'agent_message_delta'));
    expect(deltaOnly.length).toBeGreaterThan(5);
    for (const b of deltaOnly) expect(b.frame.length).toBeLessThan(300 * 1024);
    expect(Math.max(...frames.map((f) => f.length))).toBeLessThan(2 * text.length + 64 * 1024);
  });
});

describe('event serialization', () => {
  test('the delta fast path writes exactly what the generic path would', async () => {
    const { Tx } = await import('../src/session/tx.js');
    const { newSessionState, newTurn } = await import('../src/session/state.js');
    const base = newSessionState({ session_id: 's_x', cwd: '/', approval_policy: 'auto', model: { route: 'r', model: 'm', reasoning_effort: null, context_window: null }, title: null, at: 1 });
    const state = { ...base, turn: newTurn('turn_1', 'sub "quoted"', 1) };
    const fast = new Tx(state);
    const slow = new Tx(state);
    (slow as { now: number }).now = fast.now;
    const deltas = ['plain', 'with "quotes" and \\ backslash', 'unicode ✓ \u2028 \n'];
    fast.emitMessageDeltas(deltas).emitOutputDeltas('call_1', [{ stream: 'stderr', chunk: 'err\u0000"x"' }]);
    for (const delta of deltas) slow.emit({ type: 'agent_message_delta', delta });
    slow.emit({ type: 'exec_output_delta', call_id: 'call_1', stream: 'stderr', chunk: 'err\u0000"x"' });
    expect(fast.entries).toEqual(slow.entries);
    for (const e of fast.entries) expect(() => JSON.parse(e)).not.toThrow();
  });
});
