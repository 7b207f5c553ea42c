/**
 * src/client/subscriptions.ts on its own, over real ClientConnections to the in-process
 * fake server (test/helpers/tui.ts): the baseline an attach sets, duplicates dropped,
 * gaps filled from history, a warning when history cannot fill one, re-attach after a
 * new connection with after_sequence, and a session gone on resume.
 */
import { afterEach, describe, expect, it } from 'vitest';
import type { Attached, BatchFrame, ErrorFrame } from '../protocol/index.js';
import { ClientConnection } from '../src/client/connection.js';
import { Emitter } from '../src/client/emitter.js';
import type { ClientEvents } from '../src/client/events.js';
import { ClientSubscriptions } from '../src/client/subscriptions.js';
import { FakeServer, ev, waitFor } from './helpers/tui.js';

let server: FakeServer | undefined;
const conns: ClientConnection[] = [];
afterEach(async () => {
  for (const c of conns.splice(0)) c.close();
  await server?.stop();
  server = undefined;
});

async function setup(batches: number) {
  server = await FakeServer.start();
  server.addSession({ session_id: 's1' });
  for (let i = 0; i < batches; i++) server.commit('s1', [ev({ type: 'warning', message: `w${i + 1}` })]);
  const events = new Emitter<ClientEvents>();
  let current: ClientConnection | null = null;
  const subs = new ClientSubscriptions(events, () => current);
  const got: BatchFrame[] = [];
  const warnings: string[] = [];
  const errors: ErrorFrame[] = [];
  const attached: [Attached, { resumed: boolean }][] = [];
  events.on('batch', (b) => got.push(b));
  events.on('warning', (w) => warnings.push(w));
  events.on('error', (e) => errors.push(e));
  events.on('attached', (a, o) => attached.push([a, o]));
  const connect = async () => {
    const conn = await ClientConnection.open({ url: server!.url });
    conns.push(conn);
    conn.events.on('batch', (b) => {
      if (current === conn) subs.onBatch(b);
    });
    current = conn;
    return conn;
  };
  return { subs, got, warnings, errors, attached, connect };
}

/** A setup with `batches` committed, attached over a first connection. */
async function attached(batches: number, options: { replayBatches?: number; afterSequence?: number } = {}) {
  const t = await setup(batches);
  const conn = await t.connect();
  const answer = await t.subs.attach(conn, 's1', options);
  return { ...t, answer };
}

const seqs = (bs: BatchFrame[]) => bs.map((b) => b.sequence);
const warning = (n: number) => [ev({ type: 'warning', message: `x${n}` })];

describe('ClientSubscriptions', () => {
  it('replays from the oldest batch sent and streams on without duplicates', async () => {
    const t = await attached(4, { replayBatches: 2 });
    const a = t.answer;
    expect(a.next_before_sequence).toBe(3);
    await waitFor(() => t.got.length === 2, 'replay');
    expect(t.subs.lastSequence('s1')).toBe(4);
    server!.sendRaw('s1', server!.sessions.get('s1')!.batches[3]); // 4 again
    server!.commit('s1', warning(5));
    await waitFor(() => t.got.length === 3, 'live batch');
    expect(seqs(t.got)).toEqual([3, 4, 5]);
    expect(t.attached.map(([, o]) => o.resumed)).toEqual([false]);
  });

  it('with replayBatches 0 starts after the head', async () => {
    const t = await attached(3, { replayBatches: 0 });
    expect(t.subs.lastSequence('s1')).toBe(3);
    server!.commit('s1', warning(4));
    await waitFor(() => t.got.length === 1, 'live batch');
    expect(seqs(t.got)).toEqual([4]);
  });

  it('fills a gap from history, in order', async () => {
    const t = await attached(1);
    await waitFor(() => t.got.length === 1, 'replay');
    server!.commitSilently('s1', warning(2));
    server!.commitSilently('s1', warning(3));
    server!.commit('s1', warning(4));
    await waitFor(() => t.got.length === 4, 'gap filled');
    expect(seqs(t.got)).toEqual([1, 2, 3, 4]);
    expect(t.warnings).toEqual([]);
  });

  it('warns when history cannot fill a gap, and goes on with what comes', async () => {
    const t = await attached(1, { afterSequence: 1 });
    // A batch far ahead that the fake journal does not hold below it.
    server!.sendRaw('s1', { type: 'batch', session_id: 's1', sequence: 9, events: warning(9) });
    await waitFor(() => t.warnings.length === 1, 'warning');
    expect(t.warnings[0]).toMatch(/missing batches 2\.\.8 of s1/);
    await waitFor(() => t.got.length === 1, 'the batch after the gap');
    expect(seqs(t.got)).toEqual([9]);
  });

  it('re-attaches after a new connection with after_sequence, resumed', async () => {
    const t = await attached(2);
    await waitFor(() => t.got.length === 2, 'replay');
    t.subs.suspend();
    server!.commitSilently('s1', warning(3));
    const second = await t.connect();
    t.subs.resume(second);
    await waitFor(() => t.got.length === 3, 'resumed stream');
    expect(seqs(t.got)).toEqual([1, 2, 3]);
    const reattach = server!.received.filter((r) => r.frame.type === 'attach').at(-1)!;
    expect(reattach.frame).toMatchObject({ session_id: 's1', after_sequence: 2 });
    expect(t.attached.map(([, o]) => o.resumed)).toEqual([false, true]);
  });

  it('forgets a session that is gone on resume and says so', async () => {
    const t = await attached(1);
    server!.sessions.delete('s1');
    t.subs.suspend();
    t.subs.resume(await t.connect());
    await waitFor(() => t.errors.length === 1, 'error');
    expect(t.errors[0]).toMatchObject({ code: 'unknown_session' });
    expect(t.subs.lastSequence('s1')).toBeNull();
    expect(t.subs.remove('s1')).toBe(false);
  });

  it('forgets a session whose attach fails', async () => {
    const t = await setup(0);
    const conn = await t.connect();
    await expect(t.subs.attach(conn, 'missing', {})).rejects.toMatchObject({ code: 'unknown_session' });
    expect(t.subs.remove('missing')).toBe(false);
  });
});
