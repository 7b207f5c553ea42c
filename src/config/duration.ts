/**
 * Durations in configuration (docs/configuration.md): every `*_ms` key is an integer
 * number of milliseconds at most 2^31−1 (about 24.8 days) — Node's timers turn anything
 * larger into 1 ms, so a larger value is refused at start-up instead of firing at once.
 */
import { z } from 'zod';

export const MAX_DURATION_MS = 2 ** 31 - 1;

/** A duration in milliseconds from `min` (default 0) to 2^31−1. */
export function durationMs(min = 0, max = MAX_DURATION_MS): z.ZodInt {
  return z.int().min(min).max(Math.min(max, MAX_DURATION_MS), { message: `at most ${Math.min(max, MAX_DURATION_MS)} ms` });
}

/** Any duration from 0 ms to 2^31−1 ms. */
export const DurationMs = durationMs();
