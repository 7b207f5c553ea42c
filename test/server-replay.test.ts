/** Attach replay, after_sequence cursors, fan-out to many clients, turns outliving clients. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connect, type Frame, type TestClient } from './helpers/client.js';
import { startDaemon, type Daemon } from './helpers/daemon.js';

let d: Daemon;

beforeAll(async () => {
  d = await startDaemon({ config: { approval_policy: 'auto' } });
});
afterAll(async () => {
  await d?.stop();
});

const seqs = (frames: Frame[]): number[] => frames.map((f) => f.sequence as number);
const range = (from: number, to: number): number[] => Array.from({ length: Math.max(0, to - from + 1) }, (_, i) => from + i);

/** A session with a few finished turns; returns its id and head sequence. */
async function sessionWithTurns(c: TestClient, turns: number): Promise<{ sid: string; head: number; all: Frame[] }> {
  const sid = (await c.createSession()).session_id as string;
  await c.attach(sid);
  for (let i = 0; i < turns; i++) await c.waitTurnEnd(sid, await c.submitMessage(sid, `turn number ${i}`));
  await c.request({ type: 'detach', session_id: sid });
  const all = c.batches(sid);
  const head = all[all.length - 1]!.sequence as number;
  expect(seqs(all)).toEqual(range(1, head));
  return { sid, head, all };
}

describe('attach replay', () => {
  let writer: TestClient;
  let sid: string;
  let head: number;
  let all: Frame[];

  beforeAll(async () => {
    writer = await connect(d);
    ({ sid, head, all } = await sessionWithTurns(writer, 4));
    expect(head).toBeGreaterThan(6);
  });
  afterAll(async () => {
    await writer.close();
  });

  it.each([
    ['default (100): everything', undefined, () => 1, () => null],
    ['0: nothing', 0, () => head + 1, () => head + 1],
    ['3: the last three', 3, () => head - 2, () => head - 2],
    ['exactly head', 'head', () => 1, () => null],
    ['more than head', 10_000, () => 1, () => null],
  ] as Array<[string, number | 'head' | undefined, () => number, () => number | null]>)(
    'replay_batches %s',
    async (_what, replay, firstSeq, nextBefore) => {
      const c = await connect(d);
      const n = replay === 'head' ? head : replay;
      const attached = await c.attach(sid, n === undefined ? {} : { replay_batches: n });
      expect(attached).toMatchObject({ head_sequence: head, next_before_sequence: nextBefore(), session: { head_sequence: head } });
      // A request answered after the replay proves no more replayed batches are coming.
      await c.request({ type: 'list_sessions', limit: 1 });
      const got = c.batches(sid);
      expect(seqs(got)).toEqual(range(firstSeq(), head));
      expect(got).toEqual(all.slice(firstSeq() - 1));
      // attached comes before the first batch.
      const types = c.frames.map((f) => f.type);
      if (got.length) expect(types.indexOf('attached')).toBeLessThan(types.indexOf('batch'));
      expect(c.invalid).toEqual([]);
      await c.close();
    },
  );

  it.each([0, 1, 5, 'head'] as const)('after_sequence %s sends exactly the batches after it', async (q) => {
    const after = q === 'head' ? head : q;
    const c = await connect(d);
    const attached = await c.attach(sid, { after_sequence: after, replay_batches: 1 });
    expect(attached).toMatchObject({ head_sequence: head, next_before_sequence: after > 0 ? after + 1 : null });
    await c.request({ type: 'list_sessions', limit: 1 });
    expect(c.batches(sid)).toEqual(all.slice(after));
    await c.close();
  });

  it('history from next_before_sequence joins the replay without gap or overlap', async () => {
    const c = await connect(d);
    const attached = await c.attach(sid, { replay_batches: 2 });
    const older = await c.request({ type: 'history', session_id: sid, before_sequence: attached.next_before_sequence, limit: 1000 });
    expect([...(older.batches as Frame[]), ...c.batches(sid)]).toEqual(all);
    expect(older.next_before_sequence).toBeNull();
    await c.close();
  });

  it('re-attaching on the same connection restarts the stream as asked', async () => {
    const c = await connect(d);
    await c.attach(sid, { replay_batches: 2 });
    await c.attach(sid, { after_sequence: head - 1 });
    await c.request({ type: 'list_sessions', limit: 1 });
    expect(seqs(c.batches(sid))).toEqual([head - 1, head, head]);
    await c.close();
  });
});

describe('live fan-out', () => {
  it('two clients on one session see identical streams, live and in order', async () => {
    const a = await connect(d);
    const b = await connect(d);
    const sid = (await a.createSession()).session_id as string;
    await a.attach(sid);
    await b.attach(sid);
    const ids: string[] = [];
    ids.push(await a.submitMessage(sid, '!sleep 300'));
    ids.push(await b.submitMessage(sid, 'queued behind the sleep'));
    ids.push(await a.submitMessage(sid, '!sh echo fan-out'));
    await a.waitTurnEnd(sid, ids[2]!);
    await b.waitTurnEnd(sid, ids[2]!);
    const head = (await a.request({ type: 'history', session_id: sid, before_sequence: 1_000_000, limit: 1 })).batches[0].sequence;
    await b.waitForSequence(sid, head);
    expect(seqs(a.batches(sid))).toEqual(range(1, head));
    expect(b.batches(sid)).toEqual(a.batches(sid));
    expect(a.invalid).toEqual([]);
    await Promise.all([a.close(), b.close()]);
  });

  it('a client attached to several sessions gets each one in order', async () => {
    const c = await connect(d);
    const sids: string[] = [];
    for (let i = 0; i < 3; i++) sids.push((await c.createSession()).session_id as string);
    for (const sid of sids) await c.attach(sid);
    const ids = await Promise.all(sids.map((sid, i) => c.submitMessage(sid, i === 1 ? '!sleep 200' : `session ${i}`)));
    for (let i = 0; i < sids.length; i++) await c.waitTurnEnd(sids[i]!, ids[i]!);
    for (const sid of sids) {
      const got = c.batches(sid);
      expect(seqs(got)).toEqual(range(1, got.length));
    }
    await c.close();
  });

  it('reconnecting with after_sequence resumes with no gap and no duplicate', async () => {
    const watcher = await connect(d);
    const sid = (await watcher.createSession()).session_id as string;
    await watcher.attach(sid);
    const id = await watcher.submitMessage(sid, '!sleep 1200');

    const flaky = await connect(d);
    await flaky.attach(sid);
    // Drop the connection mid-turn, twice, resuming from the last batch seen each time.
    let seen: Frame[] = [];
    let current = flaky;
    for (let i = 0; i < 2; i++) {
      await current.waitForEvent(sid, (m) => m.type === 'agent_message_delta', 5000);
      await new Promise((r) => setTimeout(r, 150));
      current.ws.terminate();
      await current.closed;
      seen = [...seen, ...current.batches(sid)];
      await new Promise((r) => setTimeout(r, 200)); // batches commit while disconnected
      current = await connect(d);
      await current.attach(sid, { after_sequence: seen[seen.length - 1]!.sequence as number });
    }
    await watcher.waitTurnEnd(sid, id);
    await current.waitTurnEnd(sid, id);
    seen = [...seen, ...current.batches(sid)];
    expect(seqs(seen)).toEqual(seqs(watcher.batches(sid)));
    expect(seen).toEqual(watcher.batches(sid));
    await Promise.all([watcher.close(), current.close()]);
  });

  it('disconnecting never cancels a turn', async () => {
    const c = await connect(d);
    const sid = (await c.createSession()).session_id as string;
    const id = await c.submitMessage(sid, '!sleep 400');
    await c.waitFor((f) => f.type === 'admitted' && f.submission_id === id);
    c.ws.terminate();
    await c.closed;
    const later = await connect(d);
    await later.attach(sid);
    const end = await later.waitTurnEnd(sid, id);
    expect(end.type).toBe('turn_complete');
    await later.close();
  });
});
