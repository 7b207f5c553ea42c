/**
 * What network providers share around failures: the route's API key (read from the
 * environment variable it names, never logged), scrubbing that key from provider text,
 * and the mapping of an HTTP status to a classified Failure.
 */
import { CONTEXT_OVERFLOW, type ModelRoute } from './types.js';
import { retryAfter, type Failure } from './retry.js';

/** Key sent when a route names no key variable or the variable is empty (keyless local servers). */
export const PLACEHOLDER_API_KEY = 'not-needed';

/** The key a route uses for this call, and what is needed to explain or hide it. */
export interface RouteKey {
  /** The key to send (PLACEHOLDER_API_KEY when the variable is missing or empty). */
  apiKey: string;
  envName: string | undefined;
  /** The variable's value, when set and non-empty. */
  envKey: string | undefined;
  /** The provider's `host:port` (named when it cannot be reached), or null. */
  host?: string | null;
}

const DEFAULT_BASE: Partial<Record<ModelRoute['provider'], string>> = {
  openai: 'https://api.openai.com/v1',
  anthropic: 'https://api.anthropic.com',
};

/** `host:port` of the provider a route calls, or null (the scripted model). */
export function providerHost(route: ModelRoute): string | null {
  const base = route.base_url ?? DEFAULT_BASE[route.provider];
  if (base === undefined) return null;
  try {
    const url = new URL(base);
    return `${url.hostname}:${url.port || (url.protocol === 'https:' ? '443' : '80')}`;
  } catch {
    return null;
  }
}

/** Reads `process.env[route.api_key_env]` now (keys may be rotated while the daemon runs). */
export function routeKey(route: ModelRoute): RouteKey {
  const envName = route.api_key_env;
  const envKey = envName ? process.env[envName] || undefined : undefined;
  return { apiKey: envKey ?? PLACEHOLDER_API_KEY, envName, envKey, host: providerHost(route) };
}

/** Removes the key from a provider's text (error bodies may echo it). */
export function scrub(text: string, key: RouteKey): string {
  const secret = key.envKey;
  return secret && secret.length >= 4 ? text.split(secret).join('[redacted]') : text;
}

/**
 * Classifies an HTTP error answer. `overflow` says whether the body means "the context
 * is too long" (provider-specific); HTTP 413 always does.
 */
export function classifyStatus(status: number, detail: string, headers: Headers | undefined, key: RouteKey, overflow: boolean): Failure {
  if (status === 429) return { code: 'rate_limited', message: `rate limited by the provider: ${detail}`, transient: true, ...retryAfter(headers) };
  if (status === 413 || overflow) {
    return { code: CONTEXT_OVERFLOW, message: `the request does not fit the model's context: ${detail}`, transient: false };
  }
  if (status >= 500 || status === 408) return { code: 'provider_error', message: `provider error: ${detail}`, transient: true, ...retryAfter(headers) };
  if (status === 401 || status === 403) {
    const hint = key.envName ? (key.envKey ? '' : ` (environment variable ${key.envName} is unset or empty)`) : ' (the route has no api_key_env)';
    return { code: 'unauthorized', message: `the provider refused the credentials${hint}: ${detail}`, transient: false };
  }
  return { code: 'bad_request', message: `the provider rejected the request: ${detail}`, transient: false };
}

/** A failure to reach the provider (refused, reset, DNS, dropped mid-stream). */
export function unreachable(err: unknown, key: RouteKey): Failure {
  const message = err instanceof Error ? err.message : String(err);
  // The SDKs say "Connection error."; the reason (ECONNREFUSED, ENOTFOUND…) is in the cause.
  const cause = (err as { cause?: { code?: unknown; cause?: { code?: unknown } } } | null)?.cause;
  const reason = typeof cause?.code === 'string' ? cause.code : typeof cause?.cause?.code === 'string' ? cause.cause.code : null;
  const where = key.host ? ` at ${key.host}` : '';
  return { code: 'provider_unavailable', message: `could not reach the provider${where}: ${scrub(message, key)}${reason && !message.includes(reason) ? ` (${reason})` : ''}`, transient: true };
}
