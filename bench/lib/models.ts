/** Zero-latency model clients for in-process scenarios (SessionHost's `modelClient` option). */
import { setImmediate as tick } from 'node:timers/promises';
import type { ModelChunk, ModelClient, ModelRequest } from '../../src/model/types.js';

export interface DeltaModelOptions {
  /** text_delta chunks per reply. */
  deltas: number;
  /**
   * Deltas handed over per event-loop turn, as a network stream delivers several SSE
   * chunks per socket read. 0 = never yield (the whole reply in one macrotask).
   */
  burst: number;
}

/** Replies to every message with `deltas` deltas of 8 characters. */
export function deltaModel(options: DeltaModelOptions): ModelClient {
  return {
    async *stream(): AsyncGenerator<ModelChunk> {
      for (let i = 0; i < options.deltas; i++) {
        if (options.burst > 0 && i > 0 && i % options.burst === 0) await tick();
        // 8 characters, different each time (like real tokens): "d0000000", "d0000001", …
        yield { type: 'text_delta', delta: `d${(i % 10_000_000).toString().padStart(7, '0')}` };
      }
      yield { type: 'usage', input_tokens: 10, output_tokens: Math.ceil(options.deltas * 2) };
      yield { type: 'finish', reason: 'stop' };
    },
  };
}

/** Files the tool loop reads (created in the session cwd by the scenario). */
export const LOOP_FILES = 10;
export const loopFile = (k: number): string => `f${k % LOOP_FILES}.txt`;

/** Tool-loop steps taken since the latest user message (= tool results after it). */
export function toolResultsSinceUser(context: ModelRequest['context']): number {
  let n = 0;
  for (let i = context.length - 1; i >= 0; i--) {
    const item = context[i]!;
    if (item.role === 'user') break;
    if (item.role === 'tool') n++;
  }
  return n;
}

/**
 * A tool loop: for each user message, `steps` model calls each asking for `read_file` of a
 * different small file (so the doom-loop guard does not trip), then one final answer.
 */
export function toolLoopModel(steps: number): ModelClient {
  let calls = 0;
  return {
    async *stream(request: ModelRequest): AsyncGenerator<ModelChunk> {
      const done = toolResultsSinceUser(request.context);
      if (done < steps) {
        yield { type: 'tool_call', call: { call_id: `call_${++calls}`, tool: 'read_file', arguments: { path: loopFile(done) } } };
        yield { type: 'usage', input_tokens: 20, output_tokens: 5 };
        yield { type: 'finish', reason: 'tool_calls' };
        return;
      }
      yield { type: 'text_delta', delta: 'done' };
      yield { type: 'usage', input_tokens: 20, output_tokens: 1 };
      yield { type: 'finish', reason: 'stop' };
    },
  };
}
