/**
 * The model-call failure log (docs/operations.md#logs): every model call that fails is
 * logged once, when it ends, with its route, provider, the provider's `host:port` and the
 * error's code and message — never the API key (provider text is already scrubbed of it)
 * nor a URL's query. An interrupt is not a failure. The chunks pass through unchanged.
 */
import { providerHost } from './failure.js';
import { ModelError, type ModelChunk, type ModelClient, type ModelRequest } from './types.js';

/** What the log goes to (pino's shape). */
export interface ModelFailureLog {
  warn(fields: Record<string, unknown>, message: string): void;
  error(fields: Record<string, unknown>, message: string): void;
}

/** A URL inside provider text loses its query and fragment (keys sometimes travel there). */
function withoutQueries(text: string): string {
  return text.replace(/(https?:\/\/[^\s?#]+)[?#][^\s]*/g, '$1');
}

/** The client whose failed calls are logged. */
export function logModelFailures(client: ModelClient, log: ModelFailureLog): ModelClient {
  return {
    stream: (request) => ({
      [Symbol.asyncIterator]: () => {
        const inner = client.stream(request)[Symbol.asyncIterator]();
        return {
          next: () => inner.next().catch((err: unknown) => {
            report(request, err, log);
            throw err;
          }),
          ...(inner.return && { return: (value?: unknown) => inner.return!(value) }),
        } satisfies AsyncIterator<ModelChunk>;
      },
    }),
  };
}

function report(request: ModelRequest, err: unknown, log: ModelFailureLog): void {
  const code = err instanceof ModelError ? err.code : 'error';
  if (request.signal.aborted || code === 'aborted') return; // an interrupt or a stopped session
  const { route } = request;
  const fields = {
    route: route.route,
    provider: route.provider,
    model: route.model,
    host: providerHost(route),
    code,
    error: withoutQueries(err instanceof Error ? err.message : String(err)),
    ...(request.session_id !== undefined && { session_id: request.session_id }),
  };
  // A refused key or a rejected request needs the operator; the rest is usually transient.
  if (code === 'unauthorized' || code === 'bad_request') log.error(fields, 'model call failed');
  else log.warn(fields, 'model call failed');
}
