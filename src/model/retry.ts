/**
 * The retry loop every network provider shares: an attempt is retried only while it has
 * yielded nothing, for transient failures, with exponential backoff and full jitter or
 * the wait the server's `Retry-After` asks for; an abort ends everything at once.
 */
import type { TurnFailureCode } from '../../protocol/index.js';
import { ModelError, type ModelChunk } from './types.js';

/** Options of the retry loop; the defaults suit production use. */
export interface RetryOptions {
  /** Retries of a transient failure before any output (default 3). */
  maxRetries?: number;
  /** First backoff ceiling in ms, doubled per attempt (default 500). */
  baseDelayMs?: number;
  /** Largest backoff ceiling in ms (default 8000). */
  maxDelayMs?: number;
}

/** A provider failure, classified: the ModelError code and whether a retry may help. */
export interface Failure {
  code: TurnFailureCode;
  message: string;
  transient: boolean;
  retryAfterMs?: number;
}

/** Longest `Retry-After` wait honoured, in ms; longer values are clamped to it. */
export const MAX_RETRY_AFTER_MS = 60_000;

/**
 * Runs `attempt` until it completes, retrying transient failures that happened before
 * its first chunk. `classify` turns any thrown value that is not a ModelError into a
 * Failure; a ModelError thrown by the attempt is passed through untouched.
 */
export async function* withRetries(
  opts: RetryOptions,
  signal: AbortSignal,
  attempt: () => AsyncIterable<ModelChunk>,
  classify: (err: unknown) => Failure,
  /** Told each backoff wait before it starts (the session pauses its idle timer for it). */
  onBackoff?: (ms: number) => void,
): AsyncGenerator<ModelChunk> {
  const maxRetries = opts.maxRetries ?? 3;
  const baseDelayMs = opts.baseDelayMs ?? 500;
  const maxDelayMs = opts.maxDelayMs ?? 8_000;
  for (let n = 0; ; n++) {
    if (signal.aborted) throw abortedError();
    let yielded = false;
    try {
      for await (const chunk of attempt()) {
        yielded = true;
        yield chunk;
      }
      // SDKs end their iteration quietly on abort; make it an error.
      if (signal.aborted) throw abortedError();
      return;
    } catch (err) {
      if (signal.aborted) throw abortedError();
      if (err instanceof ModelError) throw err;
      const failure = classify(err);
      const canRetry = failure.transient && !yielded;
      if (canRetry && n < maxRetries) {
        const ceiling = Math.min(maxDelayMs, baseDelayMs * 2 ** n);
        const wait = failure.retryAfterMs ?? Math.random() * ceiling;
        onBackoff?.(wait);
        await sleep(wait, signal);
        continue;
      }
      throw new ModelError(failure.code, failure.message, canRetry);
    }
  }
}

/** The wait a `Retry-After` / `retry-after-ms` header asks for, clamped to MAX_RETRY_AFTER_MS. */
export function retryAfter(headers: Headers | undefined): { retryAfterMs?: number } {
  const ms = headers?.get('retry-after-ms');
  const raw = headers?.get('retry-after');
  let wait: number | undefined;
  if (ms && Number.isFinite(Number(ms))) wait = Number(ms);
  else if (raw && Number.isFinite(Number(raw))) wait = Number(raw) * 1000;
  else if (raw && !Number.isNaN(Date.parse(raw))) wait = Date.parse(raw) - Date.now();
  if (wait === undefined) return {};
  return { retryAfterMs: Math.min(MAX_RETRY_AFTER_MS, Math.max(0, wait)) };
}

export function abortedError(): ModelError {
  return new ModelError('aborted', 'the model call was aborted');
}

/** Waits `ms`, or throws ModelError('aborted') as soon as `signal` aborts. */
function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal.aborted) return reject(abortedError());
    const onAbort = () => {
      clearTimeout(timer);
      reject(abortedError());
    };
    const timer = setTimeout(() => {
      signal.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    signal.addEventListener('abort', onAbort, { once: true });
  });
}
