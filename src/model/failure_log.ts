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

/**
 * The failure log of the host's model calls: `wrap` logs a client's failed calls;
 * `idleTimeout` logs a call the session itself ended for sending nothing in time (the
 * client sees only an abort), with the route of that session's latest call.
 */
export class ModelFailureLogger {
  /** Per session: the request of its latest call (dropped with `forget`). */
  private readonly latest = new Map<string, ModelRequest>();

  constructor(private readonly log: ModelFailureLog) {}

  wrap(client: ModelClient): ModelClient {
    const logged = logModelFailures(client, this.log);
    return {
      stream: (request) => {
        if (request.session_id !== undefined) this.latest.set(request.session_id, request);
        return logged.stream(request);
      },
    };
  }

  /** A session's turn failed with `model_idle_timeout`: log its latest call. */
  idleTimeout(sessionId: string, message: string): void {
    const request = this.latest.get(sessionId);
    if (request) report(request, new ModelError('model_idle_timeout', message), this.log, true);
  }

  /** A session's turn ended: its latest call is no longer needed. */
  forget(sessionId: string): void {
    this.latest.delete(sessionId);
  }
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

function report(request: ModelRequest, err: unknown, log: ModelFailureLog, evenIfAborted = false): void {
  const code = err instanceof ModelError ? err.code : 'error';
  if (!evenIfAborted && (request.signal.aborted || code === 'aborted')) return; // an interrupt, a stopped session, an idle timeout (logged by `idleTimeout`)
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
