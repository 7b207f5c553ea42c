/** A tiny typed event emitter (listeners are called synchronously, in subscription order). */
export type Listener<A extends unknown[]> = (...args: A) => void;

type AnyListener = (...args: unknown[]) => void;

export class Emitter<Events extends { [K in keyof Events]: unknown[] }> {
  private readonly listeners = new Map<keyof Events, Set<AnyListener>>();

  /** Subscribe; returns the unsubscribe function. */
  on<K extends keyof Events>(event: K, listener: Listener<Events[K]>): () => void {
    let set = this.listeners.get(event);
    if (!set) this.listeners.set(event, (set = new Set()));
    const l = listener as unknown as AnyListener;
    set.add(l);
    return () => set.delete(l);
  }

  emit<K extends keyof Events>(event: K, ...args: Events[K]): void {
    const set = this.listeners.get(event);
    if (!set) return;
    for (const l of [...set]) l(...args);
  }

  clear(): void {
    this.listeners.clear();
  }
}
