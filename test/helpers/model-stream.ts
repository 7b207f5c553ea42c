/**
 * Draining a ModelClient stream in provider tests: all chunks, or the ModelError it ends with.
 */
import { expect } from 'vitest';
import { ModelError, type ModelChunk } from '../../src/model/types.js';

export async function collect(it: AsyncIterable<ModelChunk>): Promise<ModelChunk[]> {
  const out: ModelChunk[] = [];
  for await (const c of it) out.push(c);
  return out;
}

/** The ModelError the stream fails with (the test fails if it does not). */
export async function failure(it: AsyncIterable<ModelChunk>): Promise<ModelError> {
  try {
    await collect(it);
  } catch (err) {
    expect(err).toBeInstanceOf(ModelError);
    return err as ModelError;
  }
  throw new Error('expected the stream to fail');
}

/** All chunks, and how long the stream took in ms. */
export async function timed(it: AsyncIterable<ModelChunk>): Promise<{ out: ModelChunk[]; ms: number }> {
  const started = Date.now();
  const out = await collect(it);
  return { out, ms: Date.now() - started };
}

/**
 * Takes the stream's first chunk, aborts `ac` 10 ms later, and returns that chunk, what
 * the stream then fails with (null if it does not) and how long the failure took in ms.
 */
export async function abortAfterFirst(it: AsyncIterable<ModelChunk>, ac: AbortController): Promise<{ first: ModelChunk | undefined; err: unknown; ms: number }> {
  const iter = it[Symbol.asyncIterator]();
  const first = (await iter.next()).value as ModelChunk | undefined;
  const started = Date.now();
  setTimeout(() => ac.abort(), 10);
  const err = await iter.next().then(
    () => null,
    (e: unknown) => e,
  );
  return { first, err, ms: Date.now() - started };
}
