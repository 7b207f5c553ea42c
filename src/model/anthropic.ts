/**
 * The `anthropic` provider: Anthropic's streaming Messages API through the official
 * `@anthropic-ai/sdk`, with tools, extended thinking and prompt caching.
 *
 * Behaviour (see docs/models.md, "Anthropic"):
 * - The key is read from `process.env[route.api_key_env]` at each call and passed to the
 *   SDK explicitly, so the SDK never falls back to `ANTHROPIC_API_KEY` & co; without one
 *   the placeholder `not-needed` is sent (keyless proxies). The key never appears in
 *   logs (SDK logging off), errors or chunks.
 * - Retries, backoff and `Retry-After` are the shared loop of retry.ts (SDK retries off).
 * - Overflow (`prompt is too long`, input + max_tokens over the window, HTTP 413) is
 *   `ModelError('context_overflow')`; other errors map as for the openai provider.
 * - An aborted `request.signal` always ends the stream with `ModelError('aborted')`.
 */
import Anthropic, { APIConnectionError, APIError } from '@anthropic-ai/sdk';
import { buildAnthropicBody } from './anthropic_request.js';
import { AnthropicReply } from './anthropic_reply.js';
import { classifyStatus, routeKey, scrub, unreachable, type RouteKey } from './failure.js';
import { withRetries, type Failure, type RetryOptions } from './retry.js';
import type { ModelChunk, ModelClient, ModelRequest } from './types.js';

/** Options of {@link createAnthropicClient}; the defaults suit production use. */
export interface AnthropicClientOptions extends RetryOptions {
  /** A custom fetch (tests, proxies). */
  fetch?: typeof fetch;
}

/** The API root when a route sets no `base_url` (without `/v1`: the SDK adds it). */
export const ANTHROPIC_BASE_URL = 'https://api.anthropic.com';

/** Provider texts that mean "the request does not fit the model's context window". */
const OVERFLOW_TEXT = [/prompt is too long/i, /exceed context limit/i];

/** A ModelClient for Anthropic's Messages API. */
export function createAnthropicClient(opts: AnthropicClientOptions = {}): ModelClient {
  return {
    async *stream(request: ModelRequest): AsyncIterable<ModelChunk> {
      const { route, signal } = request;
      const key = routeKey(route);
      const client = new Anthropic({
        apiKey: key.apiKey,
        baseURL: route.base_url ?? ANTHROPIC_BASE_URL,
        maxRetries: 0,
        logLevel: 'off',
        ...(opts.fetch && { fetch: opts.fetch }),
      });
      const body = buildAnthropicBody(request);
      async function* attempt(): AsyncIterable<ModelChunk> {
        const stream = await client.messages.create(body, { signal });
        const reply = new AnthropicReply();
        for await (const event of stream) yield* reply.push(event);
        if (signal.aborted) return;
        yield* reply.finish();
      }
      yield* withRetries(opts, signal, attempt, (err) => classify(err, key), request.onBackoff);
    },
  };
}

/** Maps an SDK / network error to a classified Failure; the key is scrubbed from messages. */
function classify(err: unknown, key: RouteKey): Failure {
  if (err instanceof APIConnectionError) return unreachable(err, key);
  if (err instanceof APIError) {
    const detail = scrub(err.apiMessage ?? err.message, key);
    const overflow = OVERFLOW_TEXT.some((re) => re.test(detail));
    if (err.status !== undefined) return classifyStatus(err.status, detail, err.headers, key, overflow && err.status === 400);
    // An `error` event inside the SSE stream (no HTTP status).
    if (err.type === 'rate_limit_error') return { code: 'rate_limited', message: `rate limited by the provider: ${detail}`, transient: true };
    if (overflow) return classifyStatus(413, detail, undefined, key, true);
    if (err.type === 'invalid_request_error') return { code: 'bad_request', message: `the provider rejected the request: ${detail}`, transient: false };
    return { code: 'provider_error', message: `provider error: ${detail}`, transient: true };
  }
  if (err instanceof SyntaxError) {
    return { code: 'provider_error', message: `the provider sent malformed stream data: ${scrub(err.message, key)}`, transient: false };
  }
  return unreachable(err, key);
}
