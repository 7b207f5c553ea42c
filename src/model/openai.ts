/**
 * The `openai` provider: any server speaking the OpenAI-compatible Chat Completions API
 * with streaming and tool calls (OpenAI, Ollama, vLLM, llama.cpp server, OpenRouter, …).
 *
 * Behaviour (see docs/models.md):
 * - The API key is read from `process.env[route.api_key_env]` at each call; when the route
 *   has no `api_key_env` or the variable is empty, the placeholder `not-needed` is sent
 *   (keyless local servers). The key never appears in logs, errors or chunks.
 * - HTTP 408/429/5xx and connection failures are retried only while nothing has been
 *   yielded yet: exponential backoff with full jitter, `Retry-After` honoured (capped).
 *   The SDK's own retries are disabled (`maxRetries: 0`); the loop is retry.ts.
 * - Tool calls are assembled from streamed fragments and yielded, complete, when the
 *   stream ends. Unparseable arguments throw `ModelError('invalid_tool_arguments')`,
 *   except when the reply was cut off by its length limit (finish `length`): then the
 *   truncated calls are dropped and `finish: length` lets the turn continue the reply.
 * - `reasoning_content` (or `reasoning`) deltas are yielded as `reasoning_delta`; usage
 *   carries `cached_input_tokens` / `reasoning_tokens` when the server reports them.
 * - `request.system` is sent as the one system message, first; the runtime's notes
 *   (ContextItem role `system`) go as `user` messages marked `[runtime note]`. A context-length error
 *   (`context_length_exceeded`, HTTP 413) is `ModelError('context_overflow')`.
 * - A route with `stream: false` sends a non-streaming request; a server that answers a
 *   streaming request with one JSON body (`application/json`) is understood the same way.
 * - An aborted `request.signal` always ends the stream with `ModelError('aborted')`.
 * - Idle timeouts, length continuation, doom loops and step limits are the turn's job.
 */
import OpenAI, { APIConnectionError, APIError } from 'openai';
import type {
  ChatCompletion,
  ChatCompletionChunk,
  ChatCompletionCreateParamsNonStreaming,
  ChatCompletionCreateParamsStreaming,
  ChatCompletionMessageParam,
  ChatCompletionTool,
} from 'openai/resources/chat/completions';
import type { ReasoningEffort } from 'openai/resources/shared';
import { classifyStatus, routeKey, scrub, unreachable, type RouteKey } from './failure.js';
import { httpFetch } from './http_fetch.js';
import { sseData } from './sse.js';
import { withRetries, type Failure, type RetryOptions } from './retry.js';
import { completeCall, type PartialCall } from './tool_calls.js';
import { ModelError, RUNTIME_NOTE_PREFIX, type ContextItem, type ModelChunk, type ModelClient, type ModelRequest, type ToolSpec } from './types.js';

/** Options of {@link createOpenAIClient}; the defaults suit production use. */
export interface OpenAIClientOptions extends RetryOptions {
  /** A custom fetch (tests, proxies); default: `httpFetch`, node:http(s) with pooled keep-alive agents. */
  fetch?: typeof fetch;
}

/** SDK clients kept (routes × keys); the oldest is dropped past this. */
const MAX_CACHED_CLIENTS = 64;

/** A ModelClient for OpenAI-compatible Chat Completions servers. */
export function createOpenAIClient(opts: OpenAIClientOptions = {}): ModelClient {
  // One SDK client per API root and key, made once: building one per call cost more than
  // a short call's own work (the key is still read from the environment at each call).
  const clients = new Map<string, OpenAI>();
  const sdkClient = (baseURL: string, apiKey: string): OpenAI => {
    const id = `${baseURL}\n${apiKey}`;
    let client = clients.get(id);
    if (!client) {
      if (clients.size >= MAX_CACHED_CLIENTS) clients.delete(clients.keys().next().value!);
      client = new OpenAI({ apiKey, baseURL, maxRetries: 0, logLevel: 'off', fetch: opts.fetch ?? httpFetch });
      clients.set(id, client);
    }
    return client;
  };
  return {
    stream(request: ModelRequest): AsyncIterable<ModelChunk> {
      const { route, signal } = request;
      const key = routeKey(route);
      const client = sdkClient(route.base_url ?? 'https://api.openai.com/v1', key.apiKey);
      const body = buildBody(request);
      async function* attempt(): AsyncIterable<ModelChunk> {
        // The SDK makes the request and maps HTTP errors; the stream is read here (sse.ts).
        const response = await client.chat.completions.create(body as ChatCompletionCreateParamsStreaming, { signal }).asResponse();
        const acc = new ReplyAccumulator();
        if (!body.stream || isJsonBody(response)) {
          // One JSON body: a non-streaming completion (asked for, or a server's own choice).
          yield* acc.push(chunkOfCompletion(await completionOf(response)));
        } else {
          for await (const chunk of sseData(response, apiErrorOf)) yield* acc.push(chunk as ChatCompletionChunk);
        }
        if (signal.aborted) return;
        yield* acc.finish();
      }
      return withRetries(opts, signal, attempt, (err) => classify(err, key), request.onBackoff);
    },
  };
}

/** The Chat Completions request body for a ModelRequest (streaming unless the route says `stream: false`). */
function buildBody(request: ModelRequest): ChatCompletionCreateParamsStreaming | ChatCompletionCreateParamsNonStreaming {
  const streaming = request.route.stream !== false;
  return {
    model: request.route.model,
    messages: [...(request.system ? [{ role: 'system' as const, content: request.system }] : []), ...request.context.map(toMessage)],
    ...(streaming ? { stream: true as const, stream_options: { include_usage: true } } : { stream: false as const }),
    ...(request.tools.length > 0 && { tools: request.tools.map(toTool) }),
    ...(request.reasoning_effort && { reasoning_effort: request.reasoning_effort as ReasoningEffort }),
  };
}

function toMessage(item: ContextItem): ChatCompletionMessageParam {
  switch (item.role) {
    case 'user':
      return { role: 'user', content: item.text };
    case 'system':
      // Only the system prompt has system authority: a runtime note is a marked user message.
      return { role: 'user', content: RUNTIME_NOTE_PREFIX + item.text };
    case 'tool':
      return { role: 'tool', tool_call_id: item.call_id, content: item.output };
    case 'assistant': {
      const calls = item.tool_calls ?? [];
      if (calls.length === 0) return { role: 'assistant', content: item.text };
      return {
        role: 'assistant',
        content: item.text === '' ? null : item.text,
        tool_calls: calls.map((c) => ({
          id: c.call_id,
          type: 'function' as const,
          function: { name: c.tool, arguments: JSON.stringify(c.arguments) },
        })),
      };
    }
  }
}

function toTool(spec: ToolSpec): ChatCompletionTool {
  return { type: 'function', function: { name: spec.name, description: spec.description, parameters: spec.parameters } };
}

type Usage = Extract<ModelChunk, { type: 'usage' }>;

/** Reasoning text of a delta: `reasoning_content` (vLLM, DeepSeek, llama.cpp) or `reasoning` (OpenRouter). */
function reasoningOf(delta: unknown): string | undefined {
  const d = delta as { reasoning_content?: unknown; reasoning?: unknown } | undefined;
  const text = d?.reasoning_content ?? d?.reasoning;
  return typeof text === 'string' && text !== '' ? text : undefined;
}

/** Usage of a chunk: prompt and completion tokens, with cached and reasoning tokens where reported. */
function usageOf(u: NonNullable<ChatCompletionChunk['usage']>): Usage {
  const cached = u.prompt_tokens_details?.cached_tokens;
  const reasoning = u.completion_tokens_details?.reasoning_tokens;
  return {
    type: 'usage',
    input_tokens: u.prompt_tokens ?? 0,
    output_tokens: u.completion_tokens ?? 0,
    ...(typeof cached === 'number' && { cached_input_tokens: cached }),
    ...(typeof reasoning === 'number' && { reasoning_tokens: reasoning }),
  };
}

/** Folds streamed chunks into text and reasoning deltas, assembled tool calls, usage and a finish reason. */
class ReplyAccumulator {
  private readonly calls: PartialCall[] = [];
  /** Stream index → position in `calls` of the call currently being assembled. */
  private readonly slots = new Map<number, number>();
  private usage: Usage | null = null;
  private finishReason: ChatCompletionChunk.Choice['finish_reason'] = null;

  /** Absorbs one chunk; returns the reasoning and text deltas to yield now. */
  push(chunk: ChatCompletionChunk): ModelChunk[] {
    if (chunk.usage) this.usage = usageOf(chunk.usage);
    const choice = chunk.choices?.find((c) => (c.index ?? 0) === 0);
    if (!choice) return [];
    if (choice.finish_reason) this.finishReason = choice.finish_reason;
    (choice.delta?.tool_calls ?? []).forEach((frag, i) => {
      const index = frag.index ?? i;
      let slot = this.slots.get(index);
      const current = slot === undefined ? undefined : this.calls[slot];
      // Some servers reuse index 0 for parallel calls; a new id then starts a new call.
      if (!current || (frag.id && current.id && frag.id !== current.id)) {
        slot = this.calls.push({ id: '', name: '', args: '' }) - 1;
        this.slots.set(index, slot);
      }
      const call = this.calls[slot!]!;
      if (frag.id) call.id = frag.id;
      if (frag.function?.name) call.name += frag.function.name;
      if (frag.function?.arguments) call.args += frag.function.arguments;
    });
    const out: ModelChunk[] = [];
    const reasoning = reasoningOf(choice.delta);
    if (reasoning) out.push({ type: 'reasoning_delta', delta: reasoning });
    const text = choice.delta?.content;
    if (text) out.push({ type: 'text_delta', delta: text });
    return out;
  }

  /** The closing chunks: tool calls, usage, finish. Throws ModelError for a bad ending. */
  finish(): ModelChunk[] {
    const reason = this.finishReason;
    if (reason === null) {
      throw new ModelError('incomplete_stream', 'the model stream ended without a finish reason');
    }
    const truncated = reason === 'length';
    const out: ModelChunk[] = [];
    for (const partial of this.calls) {
      const call = completeCall(partial, truncated);
      if (call) out.push({ type: 'tool_call', call });
    }
    if (this.usage) out.push(this.usage);
    const hasCalls = out.some((c) => c.type === 'tool_call');
    const mapped = truncated ? 'length' : hasCalls || reason === 'tool_calls' || reason === 'function_call' ? 'tool_calls' : 'stop';
    out.push({ type: 'finish', reason: mapped });
    return out;
  }
}

/** True when the server answered with one JSON document instead of an event stream. */
function isJsonBody(response: Response): boolean {
  return (response.headers.get('content-type') ?? '').toLowerCase().includes('application/json');
}

/** The completion of a JSON body; an `error` object in it throws as a streamed error would. */
async function completionOf(response: Response): Promise<ChatCompletion> {
  const data = JSON.parse(await response.text()) as (ChatCompletion & { error?: unknown; message?: unknown }) | null;
  if (!data || typeof data !== 'object') throw new SyntaxError('the response body is not a JSON object');
  if (data.error) throw apiErrorOf(data, null);
  return data;
}

/** A whole completion as one chunk, so the accumulator treats both forms alike. */
function chunkOfCompletion(c: ChatCompletion): ChatCompletionChunk {
  const choice = (c.choices ?? []).find((ch) => (ch.index ?? 0) === 0);
  const message = choice?.message;
  const delta: ChatCompletionChunk.Choice.Delta & { reasoning_content?: unknown; reasoning?: unknown } = {};
  if (typeof message?.content === 'string') delta.content = message.content;
  const m = message as { reasoning_content?: unknown; reasoning?: unknown } | undefined;
  if (m?.reasoning_content !== undefined) delta.reasoning_content = m.reasoning_content;
  if (m?.reasoning !== undefined) delta.reasoning = m.reasoning;
  const calls = (message?.tool_calls ?? []).filter((t) => t.type === 'function');
  if (calls.length > 0) {
    delta.tool_calls = calls.map((t, index) => ({ index, id: t.id, type: 'function' as const, function: { name: t.function.name, arguments: t.function.arguments } }));
  }
  return {
    id: c.id,
    object: 'chat.completion.chunk',
    created: c.created,
    model: c.model,
    choices: choice ? [{ index: 0, delta, finish_reason: choice.finish_reason, logprobs: null }] : [],
    ...(c.usage && { usage: c.usage }),
  };
}

/** An error object sent inside the stream, as the SDK's own stream reader would throw it. */
function apiErrorOf(data: { error?: unknown; message?: unknown }, event: string | null): Error {
  return event === 'error'
    ? new APIError(undefined, data.error as object | undefined, typeof data.message === 'string' ? data.message : undefined, undefined)
    : new APIError(undefined, data.error as object | undefined, undefined, undefined);
}

/** Maps an SDK / network error to a classified Failure; the key is scrubbed from messages. */
function classify(err: unknown, key: RouteKey): Failure {
  if (err instanceof APIConnectionError) return unreachable(err, key);
  if (err instanceof APIError && err.status !== undefined) {
    return classifyStatus(err.status, scrub(err.message, key), err.headers, key, err.code === 'context_length_exceeded');
  }
  if (err instanceof APIError) {
    // An error object sent inside the SSE stream (no HTTP status).
    return { code: 'provider_error', message: `provider error: ${scrub(err.message, key)}`, transient: true };
  }
  if (err instanceof SyntaxError) {
    return { code: 'provider_error', message: `the provider sent malformed stream data: ${scrub(err.message, key)}`, transient: false };
  }
  return unreachable(err, key);
}
