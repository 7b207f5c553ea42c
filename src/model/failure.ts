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
}

/** Reads `process.env[route.api_key_env]` now (keys may be rotated while the daemon runs). */
export function routeKey(route: ModelRoute): RouteKey {
  const envName = route.api_key_env;
  const envKey = envName ? process.env[envName] || undefined : undefined;
  return { apiKey: envKey ?? PLACEHOLDER_API_KEY, envName, envKey };
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
  return { code: 'provider_unavailable', message: `could not reach the provider: ${scrub(message, key)}`, transient: true };
}
