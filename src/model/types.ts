/**
 * The model seam: a ModelClient turns a transcript into a stream of ModelChunks.
 * Providers (scripted, openai) implement it; the turn logic consumes it and knows
 * nothing about wire formats.
 */
import type { TurnFailureCode } from '../../protocol/index.js';

/** One tool call the model asked for, with its arguments already parsed. */
export interface ToolCallRequest {
  call_id: string;
  tool: string;
  arguments: Record<string, unknown>;
}

/** One item of a session's model context (the transcript a model call sees). */
export type ContextItem =
  | { role: 'user'; text: string }
  | { role: 'assistant'; text: string; tool_calls?: ToolCallRequest[] }
  | { role: 'tool'; call_id: string; tool: string; output: string; exit_code?: number }
  /** A note from the runtime to the model (e.g. "the previous turn was interrupted"). */
  | { role: 'system'; text: string };

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
  provider: 'scripted' | 'openai';
  model: string;
  base_url?: string;
  api_key_env?: string;
  context_window: number | null;
  reasoning_efforts?: string[];
}

export interface ModelRequest {
  route: ModelRoute;
  reasoning_effort: string | null;
  context: ContextItem[];
  tools: ToolSpec[];
  /** Aborted when the turn is interrupted, times out or the session stops. */
  signal: AbortSignal;
  /** Told before the provider waits `ms` to retry (the caller's idle timeout pauses meanwhile). */
  onBackoff?: (ms: number) => void;
}

/** A piece of a streamed model reply. */
export type ModelChunk =
  | { type: 'text_delta'; delta: string }
  /** A complete tool call (providers assemble streamed fragments before yielding it). */
  | { type: 'tool_call'; call: ToolCallRequest }
  | { type: 'usage'; input_tokens: number; output_tokens: number }
  | { type: 'finish'; reason: 'stop' | 'tool_calls' | 'length' };

/** Failure of a model call, as a typed value the turn can report. */
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
