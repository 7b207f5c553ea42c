/**
 * The model seam: a ModelClient turns a transcript into a stream of ModelChunks.
 * Providers (scripted, openai, anthropic) implement it; the turn logic consumes it and knows
 * nothing about wire formats.
 */
import type { TurnFailureCode } from '../../protocol/index.js';

/** One tool call the model asked for, with its arguments already parsed. */
export interface ToolCallRequest {
  call_id: string;
  tool: string;
  arguments: Record<string, unknown>;
}

/**
 * A block of model thinking kept on the assistant item so it can be sent back verbatim
 * (Anthropic extended thinking requires this within a tool loop). `redacted_thinking`
 * carries the provider's opaque encrypted form.
 */
export type ReasoningBlock =
  | { type: 'thinking'; thinking: string; signature: string }
  | { type: 'redacted_thinking'; data: string };

/** One item of a session's model context (the transcript a model call sees). */
export type ContextItem =
  | { role: 'user'; text: string }
  | {
      role: 'assistant';
      text: string;
      tool_calls?: ToolCallRequest[];
      /** The reply's thinking blocks in stream order (from `reasoning_block` chunks). */
      reasoning?: ReasoningBlock[];
    }
  | { role: 'tool'; call_id: string; tool: string; output: string; exit_code?: number }
  /** A note from the runtime to the model (e.g. "the previous turn was interrupted"). */
  | { role: 'system'; text: string };

/**
 * Starts the last user message of a summarization request (a compaction, docs/context.md),
 * so a model that must answer it specially — the scripted one — can recognize it.
 */
export const SUMMARIZE_MARKER = '[agentd:summarize]';

/**
 * Prefix of a runtime note (ContextItem role `system`: restart, length, journal pause,
 * compaction summary) sent as a `user` message: only the system prompt has system
 * authority, and model-written text never gains it.
 */
export const RUNTIME_NOTE_PREFIX = '[runtime note] ';

/** What a tool looks like to the model (function-calling format). */
export interface ToolSpec {
  name: string;
  description: string;
  /** JSON Schema of the arguments object. */
  parameters: Record<string, unknown>;
}

/** A route resolved from configuration: what `set_model` selects. */
export interface ModelRoute {
  route: string;
  provider: 'scripted' | 'openai' | 'anthropic';
  model: string;
  base_url?: string;
  api_key_env?: string;
  context_window: number | null;
  reasoning_efforts?: string[];
  /** Anthropic: the reply's output-token limit (default 8192; thinking budgets come on top). */
  max_tokens?: number;
  /** The route's system prompt (docs/context.md): used when the session has none of its own. */
  system_prompt?: string;
  /** OpenAI-compatible routes: `false` sends non-streaming requests (absent: streaming). */
  stream?: false;
}

export interface ModelRequest {
  route: ModelRoute;
  reasoning_effort: string | null;
  /** The session's system prompt (docs/context.md): sent once, before the transcript. */
  system?: string;
  context: ContextItem[];
  tools: ToolSpec[];
  /** Aborted when the turn is interrupted, times out or the session stops. */
  signal: AbortSignal;
  /** Told before the provider waits `ms` to retry (the caller's idle timeout pauses meanwhile). */
  onBackoff?: (ms: number) => void;
  /** The session the call is for (telemetry: the trace it belongs to, docs/operations.md); providers ignore it. */
  session_id?: string;
}

/** A piece of a streamed model reply. */
export type ModelChunk =
  | { type: 'text_delta'; delta: string }
  /** A piece of the model's thinking (Anthropic thinking, OpenAI-compatible `reasoning_content`). */
  | { type: 'reasoning_delta'; delta: string }
  /** A complete thinking block to keep on the assistant item (`ContextItem.reasoning`). */
  | { type: 'reasoning_block'; block: ReasoningBlock }
  /** A complete tool call (providers assemble streamed fragments before yielding it). */
  | { type: 'tool_call'; call: ToolCallRequest }
  | {
      type: 'usage';
      /** Every prompt token of the call, cached or not. */
      input_tokens: number;
      output_tokens: number;
      /** Prompt tokens read from the provider's cache (part of input_tokens). */
      cached_input_tokens?: number;
      /** Output tokens spent on thinking (part of output_tokens). */
      reasoning_tokens?: number;
    }
  | { type: 'finish'; reason: 'stop' | 'tool_calls' | 'length' };

/**
 * ModelError code of a provider saying the request does not fit the model's context
 * (OpenAI `context_length_exceeded`, Anthropic `prompt is too long`, HTTP 413): the
 * session reacts with a compaction and one retry (docs/context.md).
 */
export const CONTEXT_OVERFLOW = 'context_overflow' as const;

/** Failure of a model call, as a typed value the turn can report (codes: docs/models.md). */
export class ModelError extends Error {
  constructor(
    /** The turn fails with this code when the call is not retried. */
    readonly code: TurnFailureCode,
    message: string,
    /** True when nothing was streamed yet and the call may be retried. */
    readonly retryable = false,
  ) {
    super(message);
    this.name = 'ModelError';
  }
}

/** A provider. `stream` throws ModelError (or yields nothing more) on failure. */
export interface ModelClient {
  stream(request: ModelRequest): AsyncIterable<ModelChunk>;
}
