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
 *   The SDK's own retries are disabled (`maxRetries: 0`).
 * - Tool calls are assembled from streamed fragments and yielded, complete, when the
 *   stream ends. Unparseable arguments throw `ModelError('invalid_tool_arguments')`,
 *   except when the reply was cut off by its length limit (finish `length`): then the
 *   truncated calls are dropped and `finish: length` lets the turn continue the reply.
 * - An aborted `request.signal` always ends the stream with `ModelError('aborted')`.
 * - Idle timeouts, length continuation, doom loops and step limits are the turn's job.
 */
import { randomUUID } from 'node:crypto';
import OpenAI, { APIConnectionError, APIError, APIUserAbortError } from 'openai';
import type {
  ChatCompletionChunk,
  ChatCompletionCreateParamsStreaming,
  ChatCompletionMessageParam,
  ChatCompletionTool,
} from 'openai/resources/chat/completions';
import type { ReasoningEffort } from 'openai/resources/shared';
import type { TurnFailureCode } from '../../protocol/index.js';
import { ModelError, type ContextItem, type ModelChunk, type ModelClient, type ModelRequest, type ToolCallRequest, type ToolSpec } from './types.js';

/** Options of {@link createOpenAIClient}; the defaults suit production use. */
export interface OpenAIClientOptions {
  /** Retries of a transient failure before any output (default 3). */
  maxRetries?: number;
  /** First backoff ceiling in ms, doubled per attempt (default 500). */
  baseDelayMs?: number;
  /** Largest backoff ceiling in ms (default 8000). */
  maxDelayMs?: number;
  /** A custom fetch (tests, proxies). */
  fetch?: typeof fetch;
}

/** Key sent when a route names no key variable or the variable is empty. */
export const PLACEHOLDER_API_KEY = 'not-needed';
/** Longest `Retry-After` wait honoured, in ms; longer values are clamped to it. */
export const MAX_RETRY_AFTER_MS = 60_000;

/** A ModelClient for OpenAI-compatible Chat Completions servers. */
export function createOpenAIClient(opts: OpenAIClientOptions = {}): ModelClient {
  const maxRetries = opts.maxRetries ?? 3;
  const baseDelayMs = opts.baseDelayMs ?? 500;
  const maxDelayMs = opts.maxDelayMs ?? 8_000;

  return {
    async *stream(request: ModelRequest): AsyncIterable<ModelChunk> {
      const { route, signal } = request;
      const envName = route.api_key_env;
      const envKey = envName ? process.env[envName] : undefined;
      const apiKey = envKey ? envKey : PLACEHOLDER_API_KEY;
      const client = new OpenAI({
        apiKey,
        baseURL: route.base_url ?? 'https://api.openai.com/v1',
        maxRetries: 0,
        logLevel: 'off',
        ...(opts.fetch && { fetch: opts.fetch }),
      });
      const body = buildBody(request);

      for (let attempt = 0; ; attempt++) {
        if (signal.aborted) throw abortedError();
        let yielded = false;
        try {
          const stream = await client.chat.completions.create(body, { signal });
          const acc = new ReplyAccumulator();
          for await (const chunk of stream) {
            const delta = acc.push(chunk);
            if (delta) {
              yielded = true;
              yield delta;
            }
          }
          // The SDK ends the iteration quietly on abort; make it an error.
          if (signal.aborted) throw abortedError();
          for (const out of acc.finish()) {
            yielded = true;
            yield out;
          }
          return;
        } catch (err) {
          if (signal.aborted || err instanceof APIUserAbortError) throw abortedError();
          if (err instanceof ModelError) throw err;
          const failure = classify(err, envName, envKey);
          const canRetry = failure.transient && !yielded;
          if (canRetry && attempt < maxRetries) {
            const ceiling = Math.min(maxDelayMs, baseDelayMs * 2 ** attempt);
            const wait = failure.retryAfterMs ?? Math.random() * ceiling;
            request.onBackoff?.(wait);
            await sleep(wait, signal);
            continue;
          }
          throw new ModelError(failure.code, failure.message, canRetry);
        }
      }
    },
  };
}

/** The Chat Completions request body for a ModelRequest. */
function buildBody(request: ModelRequest): ChatCompletionCreateParamsStreaming {
  return {
    model: request.route.model,
    messages: request.context.map(toMessage),
    stream: true,
    stream_options: { include_usage: true },
    ...(request.tools.length > 0 && { tools: request.tools.map(toTool) }),
    ...(request.reasoning_effort && { reasoning_effort: request.reasoning_effort as ReasoningEffort }),
  };
}

function toMessage(item: ContextItem): ChatCompletionMessageParam {
  switch (item.role) {
    case 'user':
      return { role: 'user', content: item.text };
    case 'system':
      return { role: 'system', content: item.text };
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

interface PartialCall {
  id: string;
  name: string;
  args: string;
}

/** Folds streamed chunks into text deltas, assembled tool calls, usage and a finish reason. */
class ReplyAccumulator {
  private readonly calls: PartialCall[] = [];
  /** Stream index → position in `calls` of the call currently being assembled. */
  private readonly slots = new Map<number, number>();
  private usage: { input_tokens: number; output_tokens: number } | null = null;
  private finishReason: ChatCompletionChunk.Choice['finish_reason'] = null;

  /** Absorbs one chunk; returns a text delta to yield now, if any. */
  push(chunk: ChatCompletionChunk): ModelChunk | null {
    if (chunk.usage) {
      this.usage = { input_tokens: chunk.usage.prompt_tokens ?? 0, output_tokens: chunk.usage.completion_tokens ?? 0 };
    }
    const choice = chunk.choices?.find((c) => (c.index ?? 0) === 0);
    if (!choice) return null;
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
    const text = choice.delta?.content;
    return text ? { type: 'text_delta', delta: text } : null;
  }

  /** The closing chunks: tool calls, usage, finish. Throws ModelError for a bad ending. */
  finish(): ModelChunk[] {
    const reason = this.finishReason;
    if (reason === null) {
      throw new ModelError('incomplete_stream', 'the model stream ended without a finish reason');
    }
    const truncated = reason === 'length';
    const out: ModelChunk[] = [];
    for (const call of this.calls) {
      const args = parseArguments(call.args);
      if (args === null || !call.name) {
        if (truncated) continue;
        const what = call.name ? `tool call "${call.name}" has arguments that are not a JSON object` : 'a tool call has no name';
        throw new ModelError('invalid_tool_arguments', `${what}: ${call.args.slice(0, 200)}`);
      }
      out.push({ type: 'tool_call', call: { call_id: call.id || `call_${randomUUID()}`, tool: call.name, arguments: args } satisfies ToolCallRequest });
    }
    if (this.usage) out.push({ type: 'usage', ...this.usage });
    const hasCalls = out.some((c) => c.type === 'tool_call');
    const mapped = truncated ? 'length' : hasCalls || reason === 'tool_calls' || reason === 'function_call' ? 'tool_calls' : 'stop';
    out.push({ type: 'finish', reason: mapped });
    return out;
  }
}

/** Parses tool-call arguments; empty text is `{}`; anything but a JSON object is null. */
function parseArguments(text: string): Record<string, unknown> | null {
  if (text.trim() === '') return {};
  try {
    const value: unknown = JSON.parse(text);
    return value !== null && typeof value === 'object' && !Array.isArray(value) ? (value as Record<string, unknown>) : null;
  } catch {
    return null;
  }
}

interface Failure {
  code: TurnFailureCode;
  message: string;
  transient: boolean;
  retryAfterMs?: number;
}

/** Maps an SDK / network error to a ModelError code; the key is scrubbed from messages. */
function classify(err: unknown, envName: string | undefined, key: string | undefined): Failure {
  const scrub = (s: string) => (key && key.length >= 4 ? s.split(key).join('[redacted]') : s);
  if (err instanceof APIConnectionError) {
    return { code: 'provider_unavailable', message: `could not reach the provider: ${scrub(err.message)}`, transient: true };
  }
  if (err instanceof APIError && err.status !== undefined) {
    const status = err.status;
    const detail = scrub(err.message);
    if (status === 429) return { code: 'rate_limited', message: `rate limited by the provider: ${detail}`, transient: true, ...retryAfter(err.headers) };
    if (status >= 500 || status === 408) return { code: 'provider_error', message: `provider error: ${detail}`, transient: true, ...retryAfter(err.headers) };
    if (status === 401 || status === 403) {
      const hint = envName ? (key ? '' : ` (environment variable ${envName} is unset or empty)`) : ' (the route has no api_key_env)';
      return { code: 'unauthorized', message: `the provider refused the credentials${hint}: ${detail}`, transient: false };
    }
    if (err.code === 'context_length_exceeded') return { code: 'context_length_exceeded', message: detail, transient: false };
    return { code: 'bad_request', message: `the provider rejected the request: ${detail}`, transient: false };
  }
  if (err instanceof APIError) {
    // An error object sent inside the SSE stream (no HTTP status).
    return { code: 'provider_error', message: `provider error: ${scrub(err.message)}`, transient: true };
  }
  if (err instanceof SyntaxError) {
    return { code: 'provider_error', message: `the provider sent malformed stream data: ${scrub(err.message)}`, transient: false };
  }
  const message = err instanceof Error ? err.message : String(err);
  return { code: 'provider_unavailable', message: `could not reach the provider: ${scrub(message)}`, transient: true };
}

/** The wait a `Retry-After` / `retry-after-ms` header asks for, clamped to MAX_RETRY_AFTER_MS. */
function retryAfter(headers: Headers | undefined): { retryAfterMs?: number } {
  const ms = headers?.get('retry-after-ms');
  const raw = headers?.get('retry-after');
  let wait: number | undefined;
  if (ms && Number.isFinite(Number(ms))) wait = Number(ms);
  else if (raw && Number.isFinite(Number(raw))) wait = Number(raw) * 1000;
  else if (raw && !Number.isNaN(Date.parse(raw))) wait = Date.parse(raw) - Date.now();
  if (wait === undefined) return {};
  return { retryAfterMs: Math.min(MAX_RETRY_AFTER_MS, Math.max(0, wait)) };
}

function abortedError(): ModelError {
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
