/**
 * Fan-out of one session's committed batches to one client connection, with flow control
 * (`ClientSubscription`: the server side's subscription of a client to a session).
 *
 * A subscription is either *live* (each committed batch is written to the socket as it
 * is delivered by SessionHandle.subscribe) or *catching up* (batches are read from the
 * journal with readAfter, a bounded page at a time). It falls back to catching up
 * whenever the socket's buffer is above the high-water mark, and returns to live once
 * a journal read reaches the head. The session's listeners run synchronously right after
 * each commit; journal reads are asynchronous, so a batch delivered while a read is in
 * flight is noted (`heard`) and the subscription reads again before it goes live: the
 * switch back to live has no gap and no duplicate.
 *
 * The connection's memory is bounded: nothing is queued here; at most one batch is
 * written past the high-water mark.
 */
import type { CommittedBatch, SessionHandle, SessionHostApi } from '../session/api.js';

/** What a subscription needs from its connection. */
export interface Outlet {
  /** Bytes queued in the socket, not yet handed to the kernel. */
  readonly bufferedAmount: number;
  readonly highWaterMark: number;
  /** False once the socket is closing: stop reading the journal for it. */
  readonly isOpen: boolean;
  /** Write one committed batch (its pre-serialized frame). */
  writeBatch(batch: CommittedBatch): void;
  /** This subscription is blocked on a full buffer: call pump() when it drains. */
  wantDrain(sub: ClientSubscription): void;
  /** The session stopped itself: this subscription will get nothing more. */
  sessionStopped(sub: ClientSubscription, reason: string): void;
}

export interface SubscriptionOptions {
  /** Most batches read from the journal at once while catching up. */
  pageSize: number;
  /** Aim for journal pages of about this many bytes (fewer batches when they are big). */
  pageBytes?: number;
  /** Called each time the subscription falls from live to catching up. */
  onFallBehind?: () => void;
}

const DEFAULT_PAGE_BYTES = 1024 * 1024;

export type PumpResult = 'live' | 'blocked' | 'closed';

export class ClientSubscription {
  private lastSent: number;
  private live = false;
  /** Batches to read next time; shrinks when batches are big. */
  private pageLimit: number;
  private closed = false;
  /** The highest sequence the session delivered to this subscription. */
  private heard = 0;
  /** A pump is running (its journal read in flight): another request runs it once more. */
  private pumping: Promise<PumpResult> | null = null;
  private pumpAgain = false;
  private readonly unsubscribe: () => void;
  private readonly unwatchStop: () => void;

  /**
   * Subscribes at once: call it in the same synchronous tick as reading the head, so no
   * commit falls in between. `after` is the last sequence the client already has.
   */
  constructor(
    private readonly host: SessionHostApi,
    readonly handle: SessionHandle,
    after: number,
    private readonly out: Outlet,
    private readonly options: SubscriptionOptions,
  ) {
    this.lastSent = after;
    this.pageLimit = options.pageSize;
    this.unsubscribe = handle.subscribe((batch) => this.onBatch(batch));
    this.unwatchStop = handle.onStopped((reason) => {
      if (!this.closed) this.out.sessionStopped(this, reason);
    });
  }

  get sessionId(): string {
    return this.handle.id;
  }

  /** Sequence of the last batch written to the socket. */
  get lastSentSequence(): number {
    return this.lastSent;
  }

  get isLive(): boolean {
    return this.live;
  }

  close(): void {
    if (this.closed) return;
    this.closed = true;
    this.live = false;
    this.unsubscribe();
    this.unwatchStop();
  }

  private onBatch(batch: CommittedBatch): void {
    if (this.closed) return;
    if (batch.sequence > this.heard) this.heard = batch.sequence;
    if (batch.sequence <= this.lastSent) return; // already sent from the journal
    if (this.live && batch.sequence === this.lastSent + 1 && this.out.bufferedAmount < this.out.highWaterMark) {
      this.send(batch);
      return;
    }
    // Behind (full buffer, or a gap): stop writing live, catch up from the journal later.
    if (this.live) {
      this.live = false;
      this.options.onFallBehind?.();
      this.out.wantDrain(this);
    }
  }

  private send(batch: CommittedBatch): void {
    this.out.writeBatch(batch);
    this.lastSent = batch.sequence;
  }

  /**
   * Write journal batches after lastSent until the buffer is full ('blocked': the
   * subscription has asked for a drain callback) or the head is reached ('live').
   */
  pump(): Promise<PumpResult> {
    if (this.pumping) {
      this.pumpAgain = true;
      return this.pumping;
    }
    const run = async (): Promise<PumpResult> => {
      let result: PumpResult;
      do {
        this.pumpAgain = false;
        result = await this.pumpOnce();
      } while (this.pumpAgain && result === 'live' && !this.closed);
      return result;
    };
    const pumping = run().finally(() => {
      this.pumping = null;
    });
    this.pumping = pumping;
    return pumping;
  }

  private async pumpOnce(): Promise<PumpResult> {
    this.live = false;
    while (!this.closed) {
      if (!this.out.isOpen) return 'closed';
      if (this.out.bufferedAmount >= this.out.highWaterMark) {
        this.out.wantDrain(this);
        return 'blocked';
      }
      const limit = this.pageLimit;
      const page = await this.host.readAfter(this.handle.id, this.lastSent, limit);
      if (this.closed) return 'closed';
      this.adaptPageLimit(page);
      for (const batch of page) {
        if (batch.sequence <= this.lastSent) continue; // a concurrent read sent it
        if (batch.sequence !== this.lastSent + 1) {
          throw new Error(
            `journal of session ${this.handle.id} skips from ${this.lastSent} to ${batch.sequence}`,
          );
        }
        this.send(batch);
        if (this.closed) return 'closed';
        if (this.out.bufferedAmount >= this.out.highWaterMark) {
          this.out.wantDrain(this);
          return 'blocked';
        }
      }
      // Short: the head is reached, unless a commit was delivered while the read was in flight.
      if (page.length < limit && this.heard <= this.lastSent) {
        this.live = true;
        return 'live';
      }
    }
    return 'closed';
  }

  /** Size the next page so that it holds about `pageBytes` of frames. */
  private adaptPageLimit(page: readonly CommittedBatch[]): void {
    if (page.length === 0) return;
    let bytes = 0;
    for (const b of page) bytes += b.frame.length;
    const target = this.options.pageBytes ?? DEFAULT_PAGE_BYTES;
    const perBatch = Math.max(1, bytes / page.length);
    this.pageLimit = Math.max(1, Math.min(this.options.pageSize, Math.floor(target / perBatch)));
  }
}
