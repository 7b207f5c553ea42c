/** How long to wait before each reconnect attempt: exponential, capped, with jitter. */

export interface BackoffOptions {
  initialMs?: number;
  maxMs?: number;
  factor?: number;
  /** 0..1: each delay is multiplied by a random factor in [1-jitter, 1]. */
  jitter?: number;
}

/** Delay before reconnect attempt `attempt` (1-based). */
export function backoffDelay(attempt: number, options: BackoffOptions = {}, random = Math.random): number {
  const initial = options.initialMs ?? 200;
  const max = options.maxMs ?? 5000;
  const factor = options.factor ?? 2;
  const jitter = options.jitter ?? 0.2;
  const base = Math.min(max, initial * factor ** Math.max(0, attempt - 1));
  return Math.round(base * (1 - jitter * random()));
}
