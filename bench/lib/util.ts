/** Small helpers shared by the benchmark scenarios: temp dirs, timing, statistics, progress. */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { setImmediate as tick } from 'node:timers/promises';

/** Repository root (this file is dist/bench/lib/util.js once compiled). */
export const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..', '..', '..');

export const now = (): number => performance.now();

export function tempDir(prefix = 'agentd-bench-'): string {
  return mkdtempSync(join(tmpdir(), prefix));
}

export function removeDir(dir: string): void {
  rmSync(dir, { recursive: true, force: true });
}

/** Report a progress line to the parent runner (or stderr when run standalone). */
export function progress(message: string): void {
  if (process.send) process.send({ type: 'progress', message });
  else process.stderr.write(`  … ${message}\n`);
}

export function median(values: readonly number[]): number {
  return percentile(values, 50);
}

/** Nearest-rank percentile (p in 0..100) of a sample. */
export function percentile(values: readonly number[], p: number): number {
  if (values.length === 0) return NaN;
  const sorted = [...values].sort((a, b) => a - b);
  const rank = Math.ceil((p / 100) * sorted.length);
  return sorted[Math.min(sorted.length - 1, Math.max(0, rank - 1))]!;
}

export function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/** Yield to the event loop (lets I/O callbacks run). */
export const yieldLoop = (): Promise<void> => tick();

/** Full garbage collection (needs --expose-gc; the runner starts scenarios with it). */
export async function fullGc(): Promise<void> {
  const gc = (globalThis as { gc?: () => void }).gc;
  if (!gc) throw new Error('run with node --expose-gc');
  for (let i = 0; i < 3; i++) {
    gc();
    await yieldLoop();
  }
}

/** Reject when `promise` does not settle within `ms`. */
export function withTimeout<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout;
  return Promise.race([
    promise.finally(() => clearTimeout(timer)),
    new Promise<T>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`timed out after ${ms} ms: ${what}`)), ms);
    }),
  ]);
}

export function round(n: number, digits = 2): number {
  const f = 10 ** digits;
  return Math.round(n * f) / f;
}
