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
