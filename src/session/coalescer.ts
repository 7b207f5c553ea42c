/**
 * Coalescer: gathers the small pieces a child actor streams (model deltas, command output)
 * and hands them to the session actor in one event — when `schedule` fires, when `maxItems`
 * have gathered, or when flushed. Nothing is handed over once its call was aborted.
 */
export class Coalescer<T> {
  private pending: T[] = [];
  private scheduled = false;

  constructor(
    private readonly deliver: (items: T[]) => void,
    /** Arranges for a callback soon (setImmediate, a short timer…). */
    private readonly schedule: (fn: () => void) => void,
    private readonly signal: AbortSignal,
    private readonly maxItems = Number.POSITIVE_INFINITY,
  ) {}

  push(item: T): void {
    this.pending.push(item);
    if (this.pending.length >= this.maxItems) this.flush();
    else if (!this.scheduled) {
      this.scheduled = true;
      this.schedule(() => this.flush());
    }
  }

  /** Hand over what has gathered now (nothing after an abort). */
  flush(): void {
    this.scheduled = false;
    if (this.pending.length === 0 || this.signal.aborted) return;
    const items = this.pending;
    this.pending = [];
    this.deliver(items);
  }
}
