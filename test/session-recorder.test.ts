/** The Recorder alone, over a real Journal (SQLite file) and a real Transcript. */
import { expect, test } from 'vitest';
import { LIMITS } from '../protocol/limits.js';
import type { CommittedBatch } from '../src/journal/journal.js';
import { eventEntry } from '../src/session/event_fit.js';
import { SharedWriter } from '../src/journal/writer.js';
import { Recorder } from '../src/session/recorder.js';
import { newSessionState, type SessionState } from '../src/session/state.js';
import { Transcript } from '../src/session/transcript.js';
import { useTempJournal } from './helpers/journal.js';

const temp = useTempJournal();

function setup() {
  const journal = temp.open();
  const state = newSessionState({
    session_id: 's_rec',
    cwd: temp.dir(),
    approval_policy: 'auto',
    model: { route: 'scripted', model: 'scripted', reasoning_effort: null, context_window: null },
    title: null,
    at: 1,
  });
  const transcript = new Transcript(0, () => []);
  const committed: CommittedBatch[] = [];
  const failed: Array<{ error: Error; committed: SessionState }> = [];
  const recorder = new Recorder({
    writer: new SharedWriter(journal, { tickMs: 1000 }),
    state,
    head: 0,
    transcript,
    groupCommitMs: 1000,
    lastIngress: () => 7,
    createdAt: 1,
    hooks: { committed: (b) => committed.push(b), failed: (error, c) => failed.push({ error, committed: c }) },
  });
  const warning = (text: string) => eventEntry({ type: 'warning', message: text }, null, null, 1);
  return { journal, state, transcript, recorder, committed, failed, warning };
}

test('a change commits with its state, transcript items and admission; the first commit creates the session', async () => {
  const { journal, state, transcript, recorder, committed, warning } = setup();
  const admitted: string[] = [];
  recorder.record({
    entries: [warning('one'), warning('two')],
    state: { ...state, title: 'after' },
    items: [{ role: 'user', text: 'hi' }],
    admission: { submission_id: 'm1', onAdmitted: (o) => admitted.push(o) },
  });
  expect(recorder.hasPending).toBe(true);
  expect(committed).toHaveLength(0);
  expect(await recorder.flush()).toBe(true);
  await Promise.resolve();
  expect(committed.map((b) => b.sequence)).toEqual([1]);
  expect(committed[0]!.events.map((e) => e.msg)).toEqual([
    { type: 'warning', message: 'one' },
    { type: 'warning', message: 'two' },
  ]);
  expect(admitted).toEqual(['accepted']);
  expect(journal.isAdmitted('s_rec', 'm1')).toBe(true);
  const stored = journal.loadSession('s_rec')!;
  expect(stored.headSequence).toBe(1);
  expect(JSON.parse(stored.checkpoint)).toMatchObject({ title: 'after', transcript_length: 1, last_ingress_seq: 7 });
  expect(transcript.committedLength).toBe(1);
  expect(recorder.committed.title).toBe('after');
});

test('events too large for one frame are split into consecutive batches of one commit', async () => {
  const { journal, state, recorder, committed, warning } = setup();
  const big = 'x'.repeat(1_500_000);
  recorder.record({ entries: [warning(big), warning(big), warning(big), warning('small')], state, items: [], admission: undefined });
  await recorder.flush();
  expect(committed.map((b) => b.sequence)).toEqual([1, 2]);
  for (const b of committed) expect(Buffer.byteLength(b.frame)).toBeLessThanOrEqual(LIMITS.frameMaxBytes);
  expect(committed.flatMap((b) => b.events)).toHaveLength(4);
  expect(journal.readAfter('s_rec', 0, 10).map((b) => b.frame)).toEqual(committed.map((b) => b.frame));
});

test('a failed commit writes nothing, drops the transcript items, rejects the admission and reports the committed state', async () => {
  const { journal, state, transcript, recorder, committed, failed, warning } = setup();
  recorder.record({ entries: [warning('ok')], state, items: [], admission: undefined });
  await recorder.flush();
  journal.withDatabase((db) => db.pragma('query_only = ON'));
  const rejected: string[] = [];
  recorder.record({
    entries: [warning('doomed')],
    state: { ...state, title: 'doomed' },
    items: [{ role: 'user', text: 'doomed' }],
    admission: { submission_id: 'm2', onRejected: (m) => rejected.push(m) },
  });
  expect(await recorder.flush()).toBe(false);
  await Promise.resolve();
  expect(failed).toHaveLength(1);
  expect(failed[0]!.committed).toBe(state);
  expect(rejected[0]).toMatch(/m2 was not accepted/);
  expect(transcript.length).toBe(0);
  expect(recorder.headSequence).toBe(1);
  journal.withDatabase((db) => db.pragma('query_only = OFF'));
  expect(journal.loadSession('s_rec')!.headSequence).toBe(1);
  expect(journal.isAdmitted('s_rec', 'm2')).toBe(false);
  expect(committed).toHaveLength(1);
});
