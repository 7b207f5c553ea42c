/**
 * Answers awaited by key — a request's `req_id`, a submission's id. Each waiter settles
 * once: on its answer, on its timeout, or when the connection closes.
 */
import { ConnectionError } from './errors.js';

/** One awaited answer. */
export interface Waiter<T> {
  resolve: (v: T) => void;
  reject: (e: Error) => void;
  timer: NodeJS.Timeout;
  /** The frame type that must answer, if only one may. */
  expect?: string;
}

export class Waiters<T> {
  private readonly waiting = new Map<string, Waiter<T>>();

  constructor(private readonly timeoutMs: number) {}

  /**
   * Wait for the answer keyed `key`; `send` sends the frame that asks for it (if it
   * throws, the wait rejects with that error). Rejects with a ConnectionError naming
   * `what` when no answer comes in time.
   */
  wait(key: string, what: string, send: () => void, expect?: string): Promise<T> {
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.waiting.delete(key);
        reject(new ConnectionError(`no answer to ${what} after ${this.timeoutMs} ms`));
      }, this.timeoutMs);
      const waiter: Waiter<T> = { resolve, reject, timer };
      if (expect !== undefined) waiter.expect = expect;
      this.waiting.set(key, waiter);
      try {
        send();
      } catch (err) {
        clearTimeout(timer);
        this.waiting.delete(key);
        reject(err as Error);
      }
    });
  }

  /** Remove and return the waiter for `key`, its timeout cancelled. */
  take(key: string): Waiter<T> | undefined {
    const w = this.waiting.get(key);
    if (!w) return undefined;
    this.waiting.delete(key);
    clearTimeout(w.timer);
    return w;
  }

  /** Reject every waiter with `err`. */
  rejectAll(err: Error): void {
    for (const w of this.waiting.values()) {
      clearTimeout(w.timer);
      w.reject(err);
    }
    this.waiting.clear();
  }
}
