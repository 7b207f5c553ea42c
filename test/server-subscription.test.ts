/**
 * The server's subscription of a client to a session alone (src/server/subscription.ts),
 * against a real SessionHost (a real SQLite journal): replay from the journal, live
 * delivery, falling behind on a full buffer and catching up with no gap and no duplicate.
 * The outlet records what the subscription writes and lets the test set the buffer level.
 */
import { afterEach, describe, expect, it } from 'vitest';
import type { CommittedBatch } from '../src/session/api.js';
import type { Session } from '../src/session/session.js';
import { ClientSubscription, type Outlet } from '../src/server/subscription.js';
import { disposeHarness, msg, openHost, Watcher, type Harness } from './helpers/session.js';

class RecordingOutlet implements Outlet {
  bufferedAmount = 0;
  isOpen = true;
  readonly written: CommittedBatch[] = [];
  readonly drainRequests: ClientSubscription[] = [];
  readonly stopped: string[] = [];
  constructor(readonly highWaterMark: number) {}
  writeBatch(batch: CommittedBatch): void {
    this.written.push(batch);
    this.bufferedAmount += batch.frame.length;
  }
  wantDrain(sub: ClientSubscription): void {
    this.drainRequests.push(sub);
  }
  sessionStopped(_sub: ClientSubscription, reason: string): void {
    this.stopped.push(reason);
  }
  get sequences(): number[] {
    return this.written.map((b) => b.sequence);
  }
}

const range = (from: number, to: number): number[] => Array.from({ length: to - from + 1 }, (_, i) => from + i);

let h: Harness | undefined;
afterEach(async () => {
  await disposeHarness(h);
  h = undefined;
});

async function sessionWithTurns(turns: number): Promise<{ session: Session; watcher: Watcher }> {
  h = await openHost({ approval_policy: 'auto' });
  const id = (await h.host.create({})).session_id;
  const session = (await h.host.open(id))!;
  const watcher = new Watcher(session);
  for (let i = 0; i < turns; i++) await runTurn(session, watcher, `turn ${i}`);
  return { session, watcher };
}

async function runTurn(session: Session, watcher: Watcher, text: string): Promise<void> {
  const before = watcher.count('turn_complete');
  session.submit(msg(text));
  await watcher.until((ev) => ev.filter((e) => e.msg.type === 'turn_complete').length > before, 10_000, 'turn end');
}

describe('ClientSubscription', () => {
  it('replays the journal after `after`, goes live, and writes each new batch once', async () => {
    const { session, watcher } = await sessionWithTurns(2);
    const head = session.headSequence();
    const out = new RecordingOutlet(1 << 30);
    const sub = new ClientSubscription(h!.host, session, 2, out, { pageSize: 3 });
    expect(await sub.pump()).toBe('live');
    expect(out.sequences).toEqual(range(3, head));
    expect(sub.isLive).toBe(true);
    await runTurn(session, watcher, 'live one');
    expect(out.sequences).toEqual(range(3, session.headSequence()));
    expect(out.written.at(-1)!.frame).toBe(watcher.batches.at(-1)!.frame); // byte-identical
    sub.close();
  });

  it('falls behind on a full buffer, asks for a drain, and catches up with no gap or duplicate', async () => {
    const { session, watcher } = await sessionWithTurns(1);
    const out = new RecordingOutlet(10_000);
    let fallbacks = 0;
    const sub = new ClientSubscription(h!.host, session, 0, out, { pageSize: 64, onFallBehind: () => fallbacks++ });
    expect(await sub.pump()).toBe('live');
    out.bufferedAmount = out.highWaterMark; // the client stopped reading
    await runTurn(session, watcher, 'while full');
    await runTurn(session, watcher, 'still full');
    expect(sub.isLive).toBe(false);
    expect(fallbacks).toBe(1);
    expect(out.drainRequests).toEqual([sub]);
    const head = session.headSequence();
    expect(out.sequences.at(-1)!).toBeLessThan(head);

    out.bufferedAmount = 0; // drained
    expect(await sub.pump()).toBe('live');
    expect(out.sequences).toEqual(range(1, head));
    await runTurn(session, watcher, 'live again');
    expect(out.sequences).toEqual(range(1, session.headSequence()));
    sub.close();
  });

  it('stops a catch-up mid-page when the buffer fills and resumes where it stopped', async () => {
    const { session } = await sessionWithTurns(3);
    const head = session.headSequence();
    const out = new RecordingOutlet(1); // every write fills the buffer
    const sub = new ClientSubscription(h!.host, session, 0, out, { pageSize: 64 });
    let pumps = 0;
    for (;;) {
      pumps++;
      const result = await sub.pump();
      out.bufferedAmount = 0;
      if (result === 'live') break;
      expect(result).toBe('blocked');
      expect(out.drainRequests.at(-1)).toBe(sub);
    }
    expect(pumps).toBe(head + 1); // one batch per pump, then the empty read that goes live
    expect(out.sequences).toEqual(range(1, head));
  });

  it('writes nothing after close, nor to a closed outlet', async () => {
    const { session, watcher } = await sessionWithTurns(1);
    const out = new RecordingOutlet(1 << 30);
    const sub = new ClientSubscription(h!.host, session, 0, out, { pageSize: 8 });
    await sub.pump();
    const count = out.written.length;
    sub.close();
    await runTurn(session, watcher, 'after close');
    expect(out.written.length).toBe(count);

    const closedOut = new RecordingOutlet(1 << 30);
    closedOut.isOpen = false;
    const other = new ClientSubscription(h!.host, session, 0, closedOut, { pageSize: 8 });
    expect(await other.pump()).toBe('closed');
    expect(closedOut.written).toEqual([]);
    other.close();
  });

  it('reads smaller pages when batches are big', async () => {
    const { session, watcher } = await sessionWithTurns(0);
    await runTurn(session, watcher, 'b'.repeat(200_000));
    const reads: number[] = [];
    const host = h!.host;
    const counting = {
      ...host,
      readAfter: (id: string, after: number, limit: number) => {
        reads.push(limit);
        return host.readAfter(id, after, limit);
      },
    } as unknown as typeof host;
    const out = new RecordingOutlet(1 << 30);
    const sub = new ClientSubscription(counting, session, 0, out, { pageSize: 4, pageBytes: 100_000 });
    expect(await sub.pump()).toBe('live');
    expect(reads[0]).toBe(4);
    expect(Math.min(...reads)).toBeLessThan(4);
    expect(out.sequences).toEqual(range(1, session.headSequence()));
  });
});
