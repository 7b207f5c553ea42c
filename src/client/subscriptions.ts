/**
 * The sessions an AgentdClient is attached to, and the ordered delivery of their
 * batches: per session, batches are held while an attach or a gap fill is outstanding,
 * duplicates are dropped and gaps are filled from `history`, so each session's stream
 * is in order with no duplicate and no gap. After a reconnect every session is attached
 * again with `after_sequence` set to the last sequence delivered.
 */
import { LIMITS, type AttachOptions, type Attached, type BatchFrame } from '../../protocol/index.js';
import type { ClientConnectionLike } from './connection.js';
import type { Emitter } from './emitter.js';
import { ConnectionError, ServerError, describeError } from './errors.js';
import type { ClientEvents } from './events.js';

interface ClientSubscription {
  sessionId: string;
  replayBatches: number;
  /** Last sequence delivered (or the baseline the server starts after). */
  lastSeq: number | null;
  /** false until the baseline is confirmed; an untrusted baseline accepts any next batch. */
  trusted: boolean;
  /** Batches held while the attach answer or a gap fill is outstanding. */
  holding: boolean;
  buffer: BatchFrame[];
}

export class ClientSubscriptions {
  private readonly subs = new Map<string, ClientSubscription>();

  /**
   * `events` receives the batches, attach answers, lost sessions and warnings;
   * `current` is the connection frames come from now (answers from another are stale).
   */
  constructor(
    private readonly events: Emitter<ClientEvents>,
    private readonly current: () => ClientConnectionLike | null,
  ) {}

  /** The last sequence delivered for an attached session. */
  lastSequence(sessionId: string): number | null {
    return this.subs.get(sessionId)?.lastSeq ?? null;
  }

  /** Attach to a session over `conn` (see AgentdClient.attach); forgotten again if that fails. */
  async attach(
    conn: ClientConnectionLike,
    sessionId: string,
    options: { replayBatches?: number; afterSequence?: number },
  ): Promise<Attached> {
    const sub: ClientSubscription = {
      sessionId,
      replayBatches: options.replayBatches ?? LIMITS.replayBatches,
      lastSeq: options.afterSequence ?? null,
      trusted: options.afterSequence !== undefined,
      holding: true,
      buffer: [],
    };
    this.subs.set(sessionId, sub);
    try {
      return await this.attachSub(conn, sub, false);
    } catch (err) {
      if (this.subs.get(sessionId) === sub) this.subs.delete(sessionId);
      throw err;
    }
  }

  /** Forget a session; returns whether it was attached. */
  remove(sessionId: string): boolean {
    return this.subs.delete(sessionId);
  }

  /** The connection is gone: drop what was held (it comes again after the re-attach). */
  suspend(): void {
    for (const sub of this.subs.values()) {
      sub.holding = false;
      sub.buffer = [];
    }
  }

  /** Re-attach every session over a new connection, resuming after the last sequence delivered. */
  resume(conn: ClientConnectionLike): void {
    for (const sub of [...this.subs.values()]) {
      void this.attachSub(conn, sub, true).catch((err: unknown) => {
        if (err instanceof ServerError && err.code === 'unknown_session') {
          this.subs.delete(sub.sessionId);
          this.events.emit('error', {
            type: 'error',
            code: 'unknown_session',
            message: `session ${sub.sessionId} is gone: ${err.message}`,
          });
        } else if (this.current() === conn) {
          this.events.emit('warning', `re-attaching ${sub.sessionId} failed: ${describeError(err)}`);
        }
      });
    }
  }

  /** A batch from the current connection. */
  onBatch(batch: BatchFrame): void {
    const sub = this.subs.get(batch.session_id);
    if (sub) this.deliver(sub, batch);
  }

  private async attachSub(conn: ClientConnectionLike, sub: ClientSubscription, resumed: boolean): Promise<Attached> {
    sub.holding = true;
    sub.buffer = [];
    const opts: AttachOptions =
      sub.lastSeq !== null ? { after_sequence: sub.lastSeq } : { replay_batches: sub.replayBatches };
    let attached: Attached;
    try {
      attached = await conn.attach(sub.sessionId, opts);
    } catch (err) {
      sub.holding = false;
      sub.buffer = [];
      throw err;
    }
    if (this.subs.get(sub.sessionId) !== sub || this.current() !== conn) return attached;
    if (sub.lastSeq === null) {
      // Fresh attach: replay starts at the oldest batch sent (or 1), live after head.
      if (sub.replayBatches === 0) {
        sub.lastSeq = attached.head_sequence;
        sub.trusted = true;
      } else {
        sub.lastSeq = (attached.next_before_sequence ?? 1) - 1;
        sub.trusted = false;
      }
    } else {
      sub.trusted = true; // the server sends exactly the batches after after_sequence
    }
    this.events.emit('attached', attached, { resumed });
    this.release(sub);
    return attached;
  }

  /** Stop holding a subscription's batches and deliver what was buffered. */
  private release(sub: ClientSubscription): void {
    sub.holding = false;
    const buffered = sub.buffer.sort((a, b) => a.sequence - b.sequence);
    sub.buffer = [];
    for (const b of buffered) this.deliver(sub, b);
  }

  private deliver(sub: ClientSubscription, batch: BatchFrame): void {
    if (sub.holding) {
      sub.buffer.push(batch);
      return;
    }
    if (sub.lastSeq !== null && batch.sequence <= sub.lastSeq) {
      if (sub.trusted) return; // duplicate
      // Untrusted baseline: accept the stream as the server starts it.
    }
    if (sub.lastSeq !== null && sub.trusted && batch.sequence > sub.lastSeq + 1) {
      sub.holding = true;
      sub.buffer.push(batch);
      void this.fillGap(sub, batch.sequence);
      return;
    }
    sub.lastSeq = batch.sequence;
    sub.trusted = true;
    this.events.emit('batch', batch);
  }

  private async fillGap(sub: ClientSubscription, before: number): Promise<void> {
    const conn = this.current();
    const from = sub.lastSeq ?? 0;
    try {
      if (!conn) throw new ConnectionError('not connected');
      const limit = Math.min(LIMITS.pageMax, before - from - 1);
      const h = await conn.history(sub.sessionId, before, limit);
      if (this.subs.get(sub.sessionId) !== sub || this.current() !== conn) return;
      const got = h.batches.filter((b) => b.sequence > from && b.sequence < before).sort((a, b) => a.sequence - b.sequence);
      if (got.length === 0 || got[0]!.sequence !== from + 1) throw new Error(`history did not cover ${from + 1}..${before - 1}`);
      for (const b of got) {
        sub.lastSeq = b.sequence;
        this.events.emit('batch', b);
      }
    } catch (err) {
      this.events.emit('warning', `missing batches ${from + 1}..${before - 1} of ${sub.sessionId}: ${describeError(err)}`);
      sub.trusted = false;
    }
    if (this.subs.get(sub.sessionId) === sub && this.current() === conn) this.release(sub);
  }
}
