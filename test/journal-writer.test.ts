/**
 * The shared writer: many sessions' group commits in one transaction per tick, over a real
 * Journal (SQLite file) and real Recorders; a failing session is refused alone; an async
 * storage call; the checkpoint JSON a delta batch reuses; WAL checkpoints in the worker.
 */
import { expect, test } from 'vitest';
import { join } from 'node:path';
import type { BatchWrite, CommittedBatch, Journal, JournalWriter, WriteOutcome } from '../src/journal/journal.js';
import { WalCheckpointer } from '../src/journal/checkpointer.js';
import { SharedWriter } from '../src/journal/writer.js';
import { eventEntry } from '../src/session/event_fit.js';
import { Recorder } from '../src/session/recorder.js';
import { newSessionState, type SessionState } from '../src/session/state.js';
import { Transcript } from '../src/session/transcript.js';
import { useTempJournal } from './helpers/journal.js';

const temp = useTempJournal();
const openJournal = () => temp.open();

const warning = (text: string) => eventEntry({ type: 'warning', message: text }, null, null, 1);
const tick = (ms = 20) => new Promise((r) => setTimeout(r, ms));

/** A session's Recorder on the shared writer, created (row inserted) by a first flush (awaited). */
async function session(writer: SharedWriter, id: string, log: string[]) {
  const state = newSessionState({
    session_id: id,
    cwd: '/tmp',
    approval_policy: 'auto',
    model: { route: 'scripted', model: 'scripted', reasoning_effort: null, context_window: null },
    title: null,
    at: 1,
  });
  let ingress = 0;
  const committed: CommittedBatch[] = [];
  const failed: Array<{ error: Error; committed: SessionState }> = [];
  const recorder = new Recorder({
    writer,
    state,
    head: 0,
    transcript: new Transcript(0, () => []),
    groupCommitMs: 1000,
    lastIngress: () => ingress,
    createdAt: 1,
    hooks: {
      committed: (b) => {
        committed.push(b);
        log.push(`${id}:${b.sequence}`);
      },
      failed: (error, c) => failed.push({ error, committed: c }),
    },
  });
  recorder.record({ entries: [warning('created')], state, items: [], admission: undefined });
  expect(await recorder.flush()).toBe(true);
  return { id, state, recorder, committed, failed, setIngress: (n: number) => (ingress = n) };
}

/** Sessions s_a, s_bad, s_c on one writer; a trigger makes every batch insert of s_bad fail with `raise`. */
async function withBadSession(raise: string) {
  const j = openJournal();
  const writer = new SharedWriter(j, { tickMs: 2 });
  const log: string[] = [];
  const [a, bad, c] = (await Promise.all(['s_a', 's_bad', 's_c'].map((id) => session(writer, id, log)))) as [S, S, S];
  j.withDatabase((db) =>
    db.exec(`CREATE TEMP TRIGGER fail_bad BEFORE INSERT ON batches WHEN NEW.session_id = 's_bad' BEGIN SELECT ${raise}; END`),
  );
  log.length = 0;
  const ticks = writer.statistics().ticks;
  return { j, writer, log, a, bad, c, ticks };
}

type S = Awaited<ReturnType<typeof session>>;

test('the group commits of many sessions go into one transaction per tick; subscribers hear after it, in order', async () => {
  const j = openJournal();
  const writer = new SharedWriter(j, { tickMs: 2 });
  const log: string[] = [];
  const sessions = await Promise.all(['s_a', 's_b', 's_c'].map((id) => session(writer, id, log)));
  // The three creations were awaited together: one urgent tick.
  expect(writer.statistics()).toMatchObject({ ticks: 1, writes: 3 });
  log.length = 0;
  for (const s of sessions) s.recorder.record({ entries: [warning(`${s.id} 1`)], state: s.state, items: [], admission: undefined });
  for (const s of sessions) s.recorder.record({ entries: [warning(`${s.id} 2`)], state: s.state, items: [], admission: undefined });
  expect(writer.waitingCount).toBe(3);
  expect(log).toEqual([]); // nothing visible before the tick commits
  await tick();
  expect(writer.statistics()).toMatchObject({ ticks: 2, writes: 6, max_writes_per_tick: 3 });
  expect(log).toEqual(['s_a:2', 's_b:2', 's_c:2']);
  for (const s of sessions) {
    expect(s.committed.at(-1)!.events.map((e) => (e.msg as { message: string }).message)).toEqual([`${s.id} 1`, `${s.id} 2`]);
    expect(j.loadSession(s.id)!.headSequence).toBe(2);
    expect(j.readAfter(s.id, 1, 10).map((b) => b.frame)).toEqual([s.committed.at(-1)!.frame]);
  }
  await writer.close();
});

test('one session whose write fails is refused alone: the others commit in the same tick (savepoint)', async () => {
  const { j, writer, a, bad, c, ticks } = await withBadSession('RAISE(ABORT, \'injected\')');
  const rejected: string[] = [];
  for (const s of [a, bad, c]) {
    s.recorder.record({
      entries: [warning('x')],
      state: { ...s.state, title: 'moved' },
      items: [],
      admission: { submission_id: `m_${s.id}`, onRejected: (m) => rejected.push(m) },
    });
  }
  await tick();
  expect(writer.statistics().ticks).toBe(ticks + 1);
  expect(bad.failed).toHaveLength(1);
  expect(bad.failed[0]!.error.message).toMatch(/injected/);
  expect(bad.failed[0]!.committed).toBe(bad.state);
  expect(bad.recorder.headSequence).toBe(1);
  expect(j.loadSession('s_bad')!.headSequence).toBe(1);
  expect(j.isAdmitted('s_bad', 'm_s_bad')).toBe(false);
  expect(rejected).toEqual([expect.stringMatching(/m_s_bad was not accepted/)]);
  for (const s of [a, c]) {
    expect(s.failed).toHaveLength(0);
    expect(j.loadSession(s.id)!.headSequence).toBe(2);
    expect(JSON.parse(j.loadSession(s.id)!.checkpoint).title).toBe('moved');
    expect(j.isAdmitted(s.id, `m_${s.id}`)).toBe(true);
  }
  await writer.close();
});

test('a failure that ends the whole transaction is retried write by write: exactly the failing session fails', async () => {
  // RAISE(ROLLBACK) ends the outer transaction, not only the session's savepoint.
  const { j, writer, log, a, bad, c } = await withBadSession('RAISE(ROLLBACK, \'whole\')');
  for (const s of [a, bad, c]) s.recorder.record({ entries: [warning('y')], state: s.state, items: [], admission: undefined });
  await tick();
  expect(bad.failed.map((f) => f.error.message)).toEqual([expect.stringMatching(/whole/)]);
  expect(log).toEqual(['s_a:2', 's_c:2']);
  expect(j.loadSession('s_a')!.headSequence).toBe(2);
  expect(j.loadSession('s_c')!.headSequence).toBe(2);
  expect(j.loadSession('s_bad')!.headSequence).toBe(1);
  await writer.close();
});

test('an async storage call: subscribers hear after it resolves; writes scheduled meanwhile go into the next tick', async () => {
  const j = openJournal();
  let release: (() => void) | null = null;
  let hold = false;
  const calls: number[] = [];
  const slow: JournalWriter = {
    commit: (w: BatchWrite) => j.commit(w),
    commitMany: (writes: readonly BatchWrite[]) =>
      new Promise<WriteOutcome[]>((resolve) => {
        if (!hold) return resolve(j.commitMany(writes));
        calls.push(writes.length);
        release = () => resolve(j.commitMany(writes));
      }),
  };
  const writer = new SharedWriter(slow, { tickMs: 1 });
  const log: string[] = [];
  const a = await session(writer, 's_a', log);
  const b = await session(writer, 's_b', log);
  hold = true;
  log.length = 0;
  a.recorder.record({ entries: [warning('a1')], state: a.state, items: [], admission: undefined });
  b.recorder.record({ entries: [warning('b1')], state: b.state, items: [], admission: undefined });
  await tick();
  expect(calls).toEqual([2]);
  a.recorder.record({ entries: [warning('a2')], state: a.state, items: [], admission: undefined });
  await tick();
  expect(calls).toEqual([2]); // waits for the write in flight
  expect(log).toEqual([]);
  release!();
  await tick();
  expect(log).toEqual(['s_a:2', 's_b:2']);
  expect(calls).toEqual([2, 1]);
  release!();
  await tick();
  expect(log).toEqual(['s_a:2', 's_b:2', 's_a:3']);
  expect(j.readAfter('s_a', 0, 10).map((x) => x.sequence)).toEqual([1, 2, 3]);
});

test('a delta batch reuses the checkpoint JSON only while the state, transcript and ingress sequence are unchanged', async () => {
  const j = openJournal();
  const writer = new SharedWriter(j, { tickMs: 1000 });
  const s = await session(writer, 's_ck', []);
  const checkpoint = () => JSON.parse(j.loadSession('s_ck')!.checkpoint) as SessionState;
  s.recorder.record({ entries: [warning('d1')], state: s.state, items: [], admission: undefined });
  await s.recorder.flush();
  expect(checkpoint().last_ingress_seq).toBe(0);
  s.setIngress(5);
  s.recorder.record({ entries: [warning('d2')], state: s.state, items: [], admission: undefined });
  await s.recorder.flush();
  expect(checkpoint().last_ingress_seq).toBe(5);
  const moved = { ...s.state, title: 'new' };
  s.recorder.record({ entries: [warning('d3')], state: moved, items: [{ role: 'user', text: 'hi' }], admission: undefined });
  await s.recorder.flush();
  expect(checkpoint()).toMatchObject({ title: 'new', transcript_length: 1, last_ingress_seq: 5 });
  await writer.close();
});

test('WAL checkpoints run in the worker thread, and a WAL past its bound is reported as behind', async () => {
  const j = openJournal();
  const writer = new SharedWriter(j, { tickMs: 1 });
  await session(writer, 's_w', []);
  await tick(400); // idle: the journal asks for a checkpoint
  await j.checkpointIdle();
  const status = j.checkpointStatus()!;
  expect(status.runs).toBeGreaterThanOrEqual(1);
  expect(status.last_error).toBeNull();
  expect(status.wal_frames).toBeGreaterThan(0);
  expect(status.behind).toBe(false);

  const behind: number[] = [];
  const tight = new WalCheckpointer(join(temp.dir(), 'agentd.db'), { behindFrames: 0, onBehind: (s) => behind.push(s.wal_frames) });
  tight.request();
  await tight.idle();
  expect(tight.status().behind).toBe(true);
  expect(behind).toHaveLength(1);
  tight.close();
  await writer.close();
});
