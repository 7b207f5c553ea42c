/** src/client/waiters.ts: answers awaited by key settle once — on the answer, the timeout, or rejectAll. */
import { describe, expect, it } from 'vitest';
import { ConnectionError } from '../src/client/errors.js';
import { Waiters } from '../src/client/waiters.js';

describe('Waiters', () => {
  it('resolves the waiter taken by its key, once', async () => {
    const w = new Waiters<string>(1000);
    const sent: string[] = [];
    const a = w.wait('r1', 'list', () => sent.push('r1'), 'sessions');
    const b = w.wait('r2', 'attach', () => sent.push('r2'));
    expect(sent).toEqual(['r1', 'r2']);
    const taken = w.take('r1')!;
    expect(taken.expect).toBe('sessions');
    expect(w.take('r1')).toBeUndefined();
    taken.resolve('one');
    w.take('r2')!.resolve('two');
    await expect(a).resolves.toBe('one');
    await expect(b).resolves.toBe('two');
    expect(w.take('nope')).toBeUndefined();
  });

  it('rejects with a ConnectionError naming what timed out, and forgets the key', async () => {
    const w = new Waiters<string>(30);
    const err = await w.wait('r1', 'history', () => {}).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ConnectionError);
    expect((err as Error).message).toBe('no answer to history after 30 ms');
    expect(w.take('r1')).toBeUndefined();
  });

  it('rejects with the error of a send that throws, and forgets the key', async () => {
    const w = new Waiters<string>(1000);
    const boom = new ConnectionError('connection dropped');
    await expect(
      w.wait('s1', 'submission s1', () => {
        throw boom;
      }),
    ).rejects.toBe(boom);
    expect(w.take('s1')).toBeUndefined();
  });

  it('rejectAll rejects every waiter with the same error and clears their timers', async () => {
    const w = new Waiters<string>(20);
    const all = [w.wait('a', 'a', () => {}), w.wait('b', 'b', () => {})];
    const gone = new ConnectionError('connection closed by client', false);
    w.rejectAll(gone);
    for (const p of all) await expect(p).rejects.toBe(gone);
    expect(w.take('a')).toBeUndefined();
    // No timeout fires later (it would reject an already settled promise silently; the map stays empty).
    await new Promise((r) => setTimeout(r, 40));
    expect(w.take('b')).toBeUndefined();
  });
});
