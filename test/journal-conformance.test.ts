/**
 * The storage seam's contract (src/journal/store.ts), one suite run against both
 * backends: SQLite (the `Journal` through `SqliteJournalStore`) and PostgreSQL (a
 * throwaway server, a fresh database per test). PostgreSQL-only behaviour (connections,
 * concurrent writers, timeouts) is in journal-pg.test.ts.
 */
import { afterAll, afterEach, beforeAll, describe, expect, test } from 'vitest';
import { JournalError } from '../src/errors.js';
import { JournalConflictError, type JournalStore } from '../src/journal/store.js';
import { encodeBatchFrame } from '../protocol/index.js';
import { findPostgres, POSTGRES_MISSING, startPostgres, type PostgresServer } from './helpers/postgres.js';
import { closeAll, events, pgFixture, sqliteFixture, write, type StoreFixture } from './helpers/journal-stores.js';

// Under CI (.ci/run installs PostgreSQL) these tests always run: a failed install fails them, never skips them.
const havePostgres = findPostgres() !== null || process.env.CI === 'true';
let server: PostgresServer | undefined;
beforeAll(async () => {
  if (havePostgres) server = await startPostgres();
});
afterAll(async () => {
  await server?.stop();
});
afterEach(closeAll);

const BACKENDS: Array<{ name: string; available: boolean; fixture: () => Promise<StoreFixture> }> = [
  { name: 'sqlite', available: true, fixture: sqliteFixture },
  { name: 'postgres', available: havePostgres, fixture: () => pgFixture(server!) },
];

describe.skipIf(havePostgres)('journal store: postgres', () => {
  test.skip(`skipped: ${POSTGRES_MISSING}`, () => {});
});

/** Create session `id` with one batch; returns the store. */
async function created(store: JournalStore, id: string, extra = {}): Promise<void> {
  await store.commit(write(id, 0, [events(`${id}-1`)], { createdAt: 1_000, ...extra }));
}

const sequences = (batches: Array<{ sequence: number }>) => batches.map((b) => b.sequence);

describe.each(BACKENDS)('journal store: $name', ({ available, fixture }) => {
  const it = test.runIf(available);
  let store: JournalStore;
  let fx: StoreFixture;
  const open = async () => {
    fx = await fixture();
    store = await fx.open();
  };

  it('sequences are gap-free from 1; a checkpoint-only write keeps the head', async () => {
    await open();
    const first = await store.commit(write('s', 0, [events('a')], { createdAt: 1_000 }));
    expect(sequences(first)).toEqual([1]);
    const more = await store.commit(write('s', 1, [events('b'), events('c'), events('d')]));
    expect(sequences(more)).toEqual([2, 3, 4]);
    expect(await store.commit(write('s', 4, [], { checkpoint: '{"tool":"started"}' }))).toEqual([]);
    const stored = await store.loadSession('s');
    expect(stored).toEqual({ sessionId: 's', createdAt: 1_000, headSequence: 4, checkpoint: '{"tool":"started"}' });
    const all = await store.readAfter('s', 0, 100);
    expect(sequences(all)).toEqual([1, 2, 3, 4]);
    expect(all.map((b) => b.events[0]!.msg)).toEqual(['a', 'b', 'c', 'd'].map((delta) => ({ type: 'agent_message_delta', delta })));
    expect(await store.loadSession('missing')).toBeNull();
  });

  it('the conditional head update refuses a stale, a future, an unknown and a second first write', async () => {
    await open();
    await created(store, 's');
    const refusals = [
      write('s', 0, [events('stale')]),
      write('s', 2, [events('future')]),
      write('s', 0, [events('again')], { createdAt: 2_000 }),
      write('nobody', 0, [events('x')]),
      write('fresh', 3, [events('x')], { createdAt: 3_000 }),
    ];
    for (const w of refusals) {
      const err = await store.commit(w).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(JournalConflictError);
      expect((err as JournalConflictError).sessionId).toBe(w.sessionId);
    }
    expect(await store.loadSession('nobody')).toBeNull();
    expect(await store.loadSession('fresh')).toBeNull();
    const s = await store.loadSession('s');
    expect(s?.headSequence).toBe(1);
    expect(s?.createdAt).toBe(1_000);
    expect(sequences(await store.readAfter('s', 0, 100))).toEqual([1]);
    // The writer with the right head goes on, gap-free.
    expect(sequences(await store.commit(write('s', 1, [events('next')])))).toEqual([2]);
  });

  it('events and checkpoint are written together: a failing write leaves nothing', async () => {
    await open();
    await created(store, 's', { transcript: ['t0'], admissions: ['m0'] });
    const before = await store.loadSession('s');
    // A duplicate admission fails the transaction after the batch and checkpoint were written in it.
    const dupAdmission = write('s', 1, [events('x'), events('y')], {
      checkpoint: '{"lost":true}',
      unfinished: true,
      transcriptFrom: 1,
      transcript: ['t1'],
      admissions: ['m1', 'm1'],
    });
    // …and so does a transcript index that is already taken.
    const dupTranscript = write('s', 1, [events('z')], { transcriptFrom: 0, transcript: ['t0-again'], admissions: ['m2'] });
    for (const w of [dupAdmission, dupTranscript]) {
      const err = await store.commit(w).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(JournalError);
      expect(err).not.toBeInstanceOf(JournalConflictError);
    }
    expect(await store.loadSession('s')).toEqual(before);
    expect(sequences(await store.readAfter('s', 0, 100))).toEqual([1]);
    expect(await store.readTranscript('s')).toEqual(['t0']);
    expect(await store.isAdmitted('s', 'm1')).toBe(false);
    expect(await store.isAdmitted('s', 'm2')).toBe(false);
    expect(await store.unfinishedSessions()).toEqual([]);
    // A failing first write leaves no session row.
    await expect(store.commit(write('new', 0, [events('n')], { createdAt: 5, admissions: ['a', 'a'] }))).rejects.toBeInstanceOf(JournalError);
    expect(await store.loadSession('new')).toBeNull();
    expect(await store.listSessions(10)).toHaveLength(1);
  });

  it('admissions are recorded with their batch, per session, durably; admitting an id twice is refused', async () => {
    await open();
    await created(store, 'a', { admissions: ['m1'] });
    await created(store, 'b');
    await store.commit(write('a', 1, [events('q')], { admissions: ['m2', 'm3'] }));
    expect(await store.isAdmitted('a', 'm1')).toBe(true);
    expect(await store.isAdmitted('a', 'm3')).toBe(true);
    expect(await store.isAdmitted('a', 'm4')).toBe(false);
    expect(await store.isAdmitted('b', 'm1')).toBe(false);
    // A retried id was already admitted: the write is refused whole (the session answers already_accepted before writing).
    await expect(store.commit(write('a', 2, [events('dup')], { admissions: ['m1'] }))).rejects.toBeInstanceOf(JournalError);
    expect((await store.loadSession('a'))?.headSequence).toBe(2);
    // The same id in another session is another submission.
    await store.commit(write('b', 1, [events('ok')], { admissions: ['m1'] }));
    expect(await store.isAdmitted('b', 'm1')).toBe(true);
    await store.close();
    const again = await fx.open();
    expect(await again.isAdmitted('a', 'm2')).toBe(true);
    expect(await again.isAdmitted('b', 'm1')).toBe(true);
  });

  it('a queued message is stored once on its admission row, loaded with the session, cleared when it leaves the queue', async () => {
    await open();
    await created(store, 'q', { admissions: ['m1', 'm2'], queued: [{ submission_id: 'm1', entry: '{"text":"one"}' }, { submission_id: 'm2', entry: '{"text":"two"}' }] });
    await created(store, 'other', { admissions: ['m1'], queued: [{ submission_id: 'm1', entry: '{"text":"elsewhere"}' }] });
    const byId = (list: Array<{ submission_id: string; entry: string }> | undefined) => Object.fromEntries((list ?? []).map((q) => [q.submission_id, q.entry]));
    expect(byId((await store.loadSession('q'))!.queued)).toEqual({ m1: '{"text":"one"}', m2: '{"text":"two"}' });
    // The first leaves the queue (its turn starts); a third joins it.
    await store.commit(write('q', 1, [events('start')], { admissions: ['m3'], dequeued: ['m1'], queued: [{ submission_id: 'm3', entry: '{"text":"three"}' }] }));
    expect(byId((await store.loadSession('q'))!.queued)).toEqual({ m2: '{"text":"two"}', m3: '{"text":"three"}' });
    // A queued entry without an admission row is refused whole.
    await expect(store.commit(write('q', 2, [events('bad')], { queued: [{ submission_id: 'never-admitted', entry: '{}' }] }))).rejects.toBeInstanceOf(JournalError);
    expect((await store.loadSession('q'))!.headSequence).toBe(2);
    await store.close();
    const again = await fx.open();
    expect(byId((await again.loadSession('q'))!.queued)).toEqual({ m2: '{"text":"two"}', m3: '{"text":"three"}' });
    expect(byId((await again.loadSession('other'))!.queued)).toEqual({ m1: '{"text":"elsewhere"}' });
    expect(await again.isAdmitted('q', 'm1')).toBe(true);
  });

  it('transcript items are appended by index and read by range', async () => {
    await open();
    await created(store, 's', { transcript: ['i0', 'i1'] });
    await store.commit(write('s', 1, [], { transcriptFrom: 2, transcript: ['i2', 'i3', 'i4'] }));
    await created(store, 'other', { transcript: ['o0'] });
    expect(await store.readTranscript('s')).toEqual(['i0', 'i1', 'i2', 'i3', 'i4']);
    expect(await store.readTranscript('s', 2)).toEqual(['i2', 'i3', 'i4']);
    expect(await store.readTranscript('s', 1, 2)).toEqual(['i1', 'i2']);
    expect(await store.readTranscript('s', 4, 10)).toEqual(['i4']);
    expect(await store.readTranscript('s', 5)).toEqual([]);
    expect(await store.readTranscript('missing')).toEqual([]);
  });

  it('reads page after and before a sequence, ascending, bounded by the limit', async () => {
    await open();
    await created(store, 's');
    await store.commit(write('s', 1, Array.from({ length: 9 }, (_, i) => events(`b${i + 2}`))));
    await created(store, 'other');
    expect(sequences(await store.readAfter('s', 3, 4))).toEqual([4, 5, 6, 7]);
    expect(sequences(await store.readAfter('s', 8, 100))).toEqual([9, 10]);
    expect(await store.readAfter('s', 10, 5)).toEqual([]);
    expect(sequences(await store.readBefore('s', 11, 3))).toEqual([8, 9, 10]);
    expect(sequences(await store.readBefore('s', 3, 10))).toEqual([1, 2]);
    expect(await store.readBefore('s', 1, 10)).toEqual([]);
    expect(sequences(await store.readAfter('other', 0, 10))).toEqual([1]);
    expect(await store.readAfter('missing', 0, 10)).toEqual([]);
    const page = await store.readAfter('s', 4, 1);
    expect(page[0]).toMatchObject({ session_id: 's', sequence: 5 });
    expect(page[0]!.events[0]!.msg).toEqual({ type: 'agent_message_delta', delta: 'b5' });
  });

  it('the unfinished index follows each session’s last checkpoint', async () => {
    await open();
    await created(store, 'a', { unfinished: true });
    await created(store, 'b');
    await created(store, 'c', { unfinished: true });
    expect((await store.unfinishedSessions()).sort()).toEqual(['a', 'c']);
    await store.commit(write('a', 1, [events('done')], { unfinished: false }));
    await store.commit(write('b', 1, [], { unfinished: true }));
    expect((await store.unfinishedSessions()).sort()).toEqual(['b', 'c']);
    // A refused write does not change the index.
    await expect(store.commit(write('c', 0, [], { unfinished: false }))).rejects.toBeInstanceOf(JournalConflictError);
    expect((await store.unfinishedSessions()).sort()).toEqual(['b', 'c']);
  });

  it('sessions list newest first, paged by the last session id', async () => {
    await open();
    for (const [i, id] of ['s1', 's2', 's3', 's4', 's5'].entries()) {
      await store.commit(write(id, 0, [events(id)], { createdAt: 100 + i, checkpoint: `{"id":"${id}"}` }));
    }
    // Activity does not reorder the list: it is by creation.
    await store.commit(write('s1', 1, [events('later')]));
    const ids = (list: Array<{ sessionId: string }>) => list.map((s) => s.sessionId);
    expect(ids(await store.listSessions(2))).toEqual(['s5', 's4']);
    expect(ids(await store.listSessions(2, 's4'))).toEqual(['s3', 's2']);
    expect(ids(await store.listSessions(10, 's2'))).toEqual(['s1']);
    expect(await store.listSessions(10, 's1')).toEqual([]);
    expect(await store.listSessions(10, 'unknown')).toEqual([]);
    const [s5] = await store.listSessions(1);
    expect(s5).toEqual({ sessionId: 's5', createdAt: 104, headSequence: 1, checkpoint: '{"id":"s5"}' });
  });

  it('migrations are idempotent: reopening keeps the version and every row', async () => {
    await open();
    const version = await store.schemaVersion();
    expect(version).toBeGreaterThanOrEqual(1);
    await created(store, 's', { transcript: ['i0'], admissions: ['m'] });
    await store.close();
    await store.close(); // idempotent
    await expect(store.loadSession('s')).rejects.toBeInstanceOf(JournalError);
    for (let i = 0; i < 2; i++) {
      const again = await fx.open();
      expect(await again.schemaVersion()).toBe(version);
      expect((await again.loadSession('s'))?.headSequence).toBe(1);
      expect(await again.readTranscript('s')).toEqual(['i0']);
      await again.close();
    }
  });

  it('a batch reads back byte-identical to what was written (frame, checkpoint, transcript)', async () => {
    await open();
    // Spacing, key order, duplicate keys, escapes and non-ASCII: a jsonb column would rewrite each.
    const tricky = [
      '[{"id":"e1","msg":{"type":"agent_message_delta","delta":"caf\\u00e9 \\ud83d\\ude00 😀 \\u2028 \\u0000 \\"q\\" \\\\"}}]',
      '[ {"msg": {"delta": "b", "type": "agent_message_delta"}, "id": "e2", "id": "dup"} ]',
      '[{"id":"e3","msg":{"type":"x","n":1e21,"m":-0.0,"lone":"\\udc00","big":12345678901234567890}}]',
    ];
    const checkpoint = '{ "b": 1, "a": "\\u00e9" }';
    const transcript = ['{"role" : "user","content":"ünï"}'];
    const committed = await store.commit(write('s', 0, tricky, { createdAt: 7, checkpoint, transcript }));
    const read = await store.readAfter('s', 0, 10);
    expect(read.map((b) => b.frame)).toEqual(committed.map((b) => b.frame));
    read.forEach((b, i) => {
      expect(b.frame).toBe(encodeBatchFrame('s', i + 1, b.committed_at, tricky[i]!));
      expect(b.committed_at).toBe(committed[i]!.committed_at);
      expect(b.events).toEqual(JSON.parse(tricky[i]!));
    });
    expect((await store.readBefore('s', 4, 10)).map((b) => b.frame)).toEqual(committed.map((b) => b.frame));
    expect((await store.loadSession('s'))?.checkpoint).toBe(checkpoint);
    expect(await store.readTranscript('s')).toEqual(transcript);
  });

  it('a batch near the 4 MiB frame bound round-trips whole', async () => {
    await open();
    const big = JSON.stringify([{ id: 'big', msg: { type: 'agent_message_delta', delta: 'é😀x'.repeat(600_000) } }]);
    expect(Buffer.byteLength(big)).toBeGreaterThan(4_000_000);
    const [committed] = await store.commit(write('s', 0, [big], { createdAt: 1 }));
    const [read] = await store.readAfter('s', 0, 1);
    expect(read!.frame === committed!.frame).toBe(true);
    expect(read!.frame === encodeBatchFrame('s', 1, read!.committed_at, big)).toBe(true);
  });

  it('commits to many sessions at once all land, each session gap-free', async () => {
    await open();
    const ids = Array.from({ length: 12 }, (_, i) => `c${i}`);
    await Promise.all(ids.map((id) => created(store, id)));
    await Promise.all(
      ids.map(async (id) => {
        for (let head = 1; head <= 5; head++) await store.commit(write(id, head, [events(`${id}-${head + 1}`)]));
      }),
    );
    for (const id of ids) {
      const batches = await store.readAfter(id, 0, 100);
      expect(sequences(batches)).toEqual([1, 2, 3, 4, 5, 6]);
      expect(batches.map((b) => (b.events[0]!.msg as { delta: string }).delta)).toEqual([1, 2, 3, 4, 5, 6].map((n) => `${id}-${n}`));
    }
    expect(await store.listSessions(100)).toHaveLength(12);
  });
});
