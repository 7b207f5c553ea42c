/**
 * One timer for all sessions' short waits: `afterShared(fn)` runs `fn` about `SHARED_TICK_MS`
 * later, together with every callback asked for meanwhile. Many sessions streaming deltas
 * at once then cost one timer per millisecond instead of one per session per delta.
 */

/** How long a callback waits at most. */
export const SHARED_TICK_MS = 1;

let due: Array<() => void> = [];
let timer: NodeJS.Timeout | null = null;

function run(): void {
  timer = null;
  const now = due;
  due = [];
  let failure: { err: unknown } | null = null;
  for (const fn of now) {
    try {
      fn();
    } catch (err) {
      failure ??= { err };
    }
  }
  // As a timer of its own would: the error is thrown, after every other callback ran.
  if (failure) throw failure.err;
}

/** Run `fn` at the next shared tick (callbacks run in the order asked). */
export function afterShared(fn: () => void): void {
  due.push(fn);
  timer ??= setTimeout(run, SHARED_TICK_MS);
}
