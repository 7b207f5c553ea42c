/**
 * The sending half of one client connection, with flow control (the way `ws` splits a
 * connection into receiver, sender and lifecycle, this is the sender side).
 *
 * Every frame is written with a completion callback. The outbox is *full* once the
 * socket's buffer reaches the high-water mark; whoever wants to write more (a
 * subscription catching up, the inbound side holding client requests) registers a
 * drain waiter, which is called once the buffer falls below the low-water mark (half the
 * high-water mark). Waiters run in registration order; a waiter that finds the outbox
 * full again simply registers again. A poll timer is the safety net for a drain that no
 * write callback reports.
 */

import WebSocket from 'ws';

/** What the outbox needs from a socket (see `frameSocketOf` for a `ws` WebSocket). */
export interface FrameSocket {
  /** Bytes queued in the socket, not yet handed to the kernel. */
  readonly bufferedAmount: number;
  /** False once the socket is closing or closed: writes are dropped. */
  readonly isOpen: boolean;
  send(data: string | Buffer, done: (err?: Error) => void): void;
}

/** A `ws` WebSocket as a FrameSocket: text frames, open while OPEN. */
export function frameSocketOf(ws: WebSocket): FrameSocket {
  return {
    get bufferedAmount() {
      return ws.bufferedAmount;
    },
    get isOpen() {
      return ws.readyState === WebSocket.OPEN;
    },
    send: (data, done) => ws.send(data, { binary: false }, done),
  };
}

/** How often an outbox with drain waiters re-checks its buffer (safety net). */
export const DRAIN_POLL_MS = 100;

export class Outbox {
  private readonly waiters = new Map<unknown, () => void>();
  private pollTimer: NodeJS.Timeout | undefined;
  private closed = false;
  readonly lowWaterMark: number;
  private readonly onFlushed = (err?: Error): void => {
    if (!err) this.checkDrain();
  };

  constructor(
    private readonly socket: FrameSocket,
    readonly highWaterMark: number,
  ) {
    this.lowWaterMark = Math.floor(highWaterMark / 2);
  }

  get bufferedAmount(): number {
    return this.socket.bufferedAmount;
  }

  get isOpen(): boolean {
    return !this.closed && this.socket.isOpen;
  }

  /** At or above the high-water mark: write nothing more that can wait. */
  get isFull(): boolean {
    return this.socket.bufferedAmount >= this.highWaterMark;
  }

  /** Write one text frame (dropped when the socket is no longer open). */
  write(data: string | Buffer): void {
    if (!this.isOpen) return;
    this.socket.send(data, this.onFlushed);
  }

  /**
   * Call `fn` once the buffer has drained below the low-water mark. One waiter per `key`
   * (registering again keeps the first place in line).
   */
  whenDrained(key: unknown, fn: () => void): void {
    if (this.closed) return;
    if (!this.waiters.has(key)) this.waiters.set(key, fn);
    if (!this.pollTimer) {
      this.pollTimer = setInterval(() => this.checkDrain(), DRAIN_POLL_MS);
      this.pollTimer.unref();
    }
  }

  /** Forget the waiter of `key` (a detached subscription). */
  cancel(key: unknown): void {
    this.waiters.delete(key);
    this.stopPollingIfIdle();
  }

  /** Drop every waiter and stop the timer (the connection closed). */
  close(): void {
    this.closed = true;
    this.waiters.clear();
    this.stopPollingIfIdle();
  }

  /** Run the waiters if the buffer drained; each may write and register again. */
  private checkDrain(): void {
    if (!this.isOpen || this.waiters.size === 0) return;
    if (this.socket.bufferedAmount >= this.lowWaterMark) return;
    const ready = [...this.waiters];
    this.waiters.clear();
    for (const [key, fn] of ready) {
      if (!this.isOpen) break;
      if (this.isFull) this.waiters.set(key, fn); // full again: keep its turn for the next drain
      else fn();
    }
    this.stopPollingIfIdle();
  }

  private stopPollingIfIdle(): void {
    if (this.waiters.size === 0 && this.pollTimer) {
      clearInterval(this.pollTimer);
      this.pollTimer = undefined;
    }
  }
}
