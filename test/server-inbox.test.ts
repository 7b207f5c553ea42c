/** A flood past the bounded inbox: `busy` for exactly the overflow, nothing else lost. */
import type { Socket } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connect, type Frame, type TestClient } from './helpers/client.js';
import { startDaemon, type Daemon } from './helpers/daemon.js';

const CAPACITY = 4;
let d: Daemon;

beforeAll(async () => {
  d = await startDaemon({ config: { approval_policy: 'auto', limits: { inbox_capacity: CAPACITY } } });
});
afterAll(async () => {
  await d?.stop();
});

/** Send the frames in one socket write, so the daemon reads them in one go. */
function burst(c: TestClient, frames: object[]): void {
  const socket = (c.ws as unknown as { _socket: Socket })._socket;
  socket.cork();
  for (const f of frames) c.send(f);
  socket.uncork();
}

const message = (sid: string, id: string, text: string): object => ({
  type: 'submit',
  session_id: sid,
  submission: { id, op: { type: 'message', text } },
});

/** Wait for the queued/error answer of each id; returns them in id order. */
async function answers(c: TestClient, ids: string[]): Promise<Frame[]> {
  return c.until(() => {
    const got = ids.map((id) => c.frames.find((f) => (f.type === 'queued' || f.type === 'error') && f.submission_id === id));
    return got.every(Boolean) ? (got as Frame[]) : undefined;
  });
}

describe(`inbox capacity ${CAPACITY}`, () => {
  it('while a turn runs, a burst of N messages gets exactly N - capacity busy', async () => {
    const c = await connect(d);
    const sid = (await c.createSession()).session_id as string;
    await c.attach(sid);
    const long = await c.submitMessage(sid, '!sleep 1500', 'long');
    await c.waitForEvent(sid, (m, e) => m.type === 'turn_started' && e.submission_id === long);

    const N = 10;
    const ids = Array.from({ length: N }, (_, i) => `flood-${i}`);
    burst(c, ids.map((id) => message(sid, id, `queued ${id}`)));
    const got = await answers(c, ids);
    // Queued messages occupy the inbox until their own turn starts: the first CAPACITY fit.
    expect(got.slice(0, CAPACITY).map((f) => f.type)).toEqual(Array(CAPACITY).fill('queued'));
    expect(got.slice(0, CAPACITY).map((f) => f.ingress_seq)).toEqual([2, 3, 4, 5]);
    for (const f of got.slice(CAPACITY)) {
      expect(f).toMatchObject({ type: 'error', code: 'busy', message: expect.stringMatching(/full/) });
    }

    // Busy is only a back-off signal: the queued ones all run, the refused ones left no trace.
    for (const id of ids.slice(0, CAPACITY)) await c.waitTurnEnd(sid, id, 20_000);
    const touched = new Set(c.batches(sid).flatMap((b) => (b.events as Frame[]).map((e) => e.submission_id)));
    for (const id of ids.slice(CAPACITY)) expect(touched.has(id)).toBe(false);
    // Room again.
    expect((await c.submit(sid, 'after', { type: 'message', text: 'room again' })).type).toBe('queued');
    await c.close();
  });

  it('on an idle session a burst fills the inbox before the first message starts its turn', async () => {
    const c = await connect(d);
    const sid = (await c.createSession()).session_id as string;
    await c.attach(sid);
    const N = 9;
    const ids = Array.from({ length: N }, (_, i) => `idle-${i}`);
    burst(c, ids.map((id, i) => message(sid, id, i === 0 ? '!sleep 300' : `msg ${i}`)));
    const got = await answers(c, ids);
    const busy = got.filter((f) => f.type === 'error');
    expect(busy.every((f) => f.code === 'busy')).toBe(true);
    expect(busy.length).toBe(N - CAPACITY);
    expect(got.slice(0, CAPACITY).every((f) => f.type === 'queued')).toBe(true);
    await c.waitTurnEnd(sid, ids[CAPACITY - 1]!, 20_000);
    await c.close();
  });

  it('other sessions are not affected by a full inbox', async () => {
    const c = await connect(d);
    const full = (await c.createSession()).session_id as string;
    const other = (await c.createSession()).session_id as string;
    await c.attach(full);
    await c.attach(other);
    const long = await c.submitMessage(full, '!sleep 800', 'full-long');
    await c.waitForEvent(full, (m, e) => m.type === 'turn_started' && e.submission_id === long);
    burst(c, Array.from({ length: CAPACITY + 2 }, (_, i) => message(full, `full-${i}`, 'x')));
    const id = await c.submitMessage(other, 'still served');
    const end = await c.waitTurnEnd(other, id);
    expect(end.type).toBe('turn_complete');
    await c.close();
  });
});
