/**
 * Folds Anthropic's streamed Messages events into ModelChunks: text and thinking deltas
 * as they come, complete thinking blocks (with signatures) and redacted thinking when
 * their block stops, tool calls assembled from `input_json_delta` fragments, usage with
 * cache and thinking tokens, and the stop reason mapped to a finish.
 */
import type { MessageDeltaUsage, RawMessageStreamEvent, StopReason, Usage } from '@anthropic-ai/sdk/resources/messages/messages';
import { completeCall, type PartialCall } from './tool_calls.js';
import { ModelError, type ModelChunk } from './types.js';

/** A content block while it streams, by its stream index. */
type OpenBlock =
  | { kind: 'thinking'; thinking: string; signature: string }
  | { kind: 'redacted'; data: string }
  | { kind: 'tool'; call: PartialCall; startInput: unknown }
  | { kind: 'other' };

/** Finish reason of each stop reason; unknown reasons end like `end_turn`. */
const FINISH: Partial<Record<StopReason, 'stop' | 'tool_calls' | 'length'>> = {
  end_turn: 'stop',
  stop_sequence: 'stop',
  pause_turn: 'stop',
  refusal: 'stop',
  tool_use: 'tool_calls',
  max_tokens: 'length',
  model_context_window_exceeded: 'length',
};

export class AnthropicReply {
  private readonly open = new Map<number, OpenBlock>();
  private readonly calls: PartialCall[] = [];
  private stopReason: StopReason | null = null;
  private input = 0;
  private cacheRead = 0;
  private cacheCreation = 0;
  private output = 0;
  private thinkingTokens: number | null = null;
  private sawUsage = false;

  /** Absorbs one event; returns the chunks to yield now. */
  push(event: RawMessageStreamEvent): ModelChunk[] {
    switch (event.type) {
      case 'message_start':
        this.absorbUsage(event.message.usage);
        return [];
      case 'content_block_start': {
        const b = event.content_block;
        if (b.type === 'thinking') this.open.set(event.index, { kind: 'thinking', thinking: b.thinking ?? '', signature: b.signature ?? '' });
        else if (b.type === 'redacted_thinking') this.open.set(event.index, { kind: 'redacted', data: b.data });
        else if (b.type === 'tool_use') {
          const call = { id: b.id, name: b.name, args: '' };
          this.calls.push(call);
          this.open.set(event.index, { kind: 'tool', call, startInput: b.input });
        } else if (b.type === 'text') {
          this.open.set(event.index, { kind: 'other' });
          return b.text ? [{ type: 'text_delta', delta: b.text }] : [];
        } else this.open.set(event.index, { kind: 'other' });
        return [];
      }
      case 'content_block_delta': {
        const d = event.delta;
        const block = this.open.get(event.index);
        if (d.type === 'text_delta') return d.text ? [{ type: 'text_delta', delta: d.text }] : [];
        if (d.type === 'thinking_delta' && block?.kind === 'thinking') {
          block.thinking += d.thinking;
          return d.thinking ? [{ type: 'reasoning_delta', delta: d.thinking }] : [];
        }
        if (d.type === 'signature_delta' && block?.kind === 'thinking') block.signature += d.signature;
        if (d.type === 'input_json_delta' && block?.kind === 'tool') block.call.args += d.partial_json;
        return [];
      }
      case 'content_block_stop': {
        const block = this.open.get(event.index);
        this.open.delete(event.index);
        if (block?.kind === 'thinking') return [{ type: 'reasoning_block', block: { type: 'thinking', thinking: block.thinking, signature: block.signature } }];
        if (block?.kind === 'redacted') return [{ type: 'reasoning_block', block: { type: 'redacted_thinking', data: block.data } }];
        if (block?.kind === 'tool' && block.call.args === '' && hasKeys(block.startInput)) block.call.args = JSON.stringify(block.startInput);
        return [];
      }
      case 'message_delta':
        if (event.delta.stop_reason) this.stopReason = event.delta.stop_reason;
        this.absorbUsage(event.usage);
        return [];
      case 'message_stop':
        return [];
    }
  }

  /** The closing chunks: tool calls, usage, finish. Throws ModelError for a bad ending. */
  finish(): ModelChunk[] {
    const reason = this.stopReason;
    if (reason === null) throw new ModelError('incomplete_stream', 'the model stream ended without a stop reason');
    const mapped = FINISH[reason] ?? 'stop';
    const truncated = mapped === 'length';
    const out: ModelChunk[] = [];
    for (const partial of this.calls) {
      const call = completeCall(partial, truncated);
      if (call) out.push({ type: 'tool_call', call });
    }
    if (this.sawUsage) {
      out.push({
        type: 'usage',
        // Every prompt token, as OpenAI counts them: uncached + cache reads + cache writes.
        input_tokens: this.input + this.cacheRead + this.cacheCreation,
        output_tokens: this.output,
        cached_input_tokens: this.cacheRead,
        ...(this.thinkingTokens !== null && { reasoning_tokens: this.thinkingTokens }),
      });
    }
    const hasCalls = out.some((c) => c.type === 'tool_call');
    out.push({ type: 'finish', reason: truncated ? 'length' : hasCalls ? 'tool_calls' : mapped });
    return out;
  }

  /** `message_delta` usage is cumulative: a reported field replaces the earlier value. */
  private absorbUsage(u: Usage | MessageDeltaUsage | null | undefined): void {
    if (!u) return;
    this.sawUsage = true;
    if (typeof u.input_tokens === 'number') this.input = u.input_tokens;
    if (typeof u.cache_read_input_tokens === 'number') this.cacheRead = u.cache_read_input_tokens;
    if (typeof u.cache_creation_input_tokens === 'number') this.cacheCreation = u.cache_creation_input_tokens;
    if (typeof u.output_tokens === 'number') this.output = u.output_tokens;
    const thinking = u.output_tokens_details?.thinking_tokens;
    if (typeof thinking === 'number') this.thinkingTokens = thinking;
  }
}

function hasKeys(value: unknown): boolean {
  return value !== null && typeof value === 'object' && Object.keys(value).length > 0;
}
