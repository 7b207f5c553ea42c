/**
 * GET /metrics (docs/operations.md "Metrics"): the Prometheus exposition of the daemon's
 * metrics, for a request bearing the client token (`Authorization: Bearer TOKEN`), or for
 * anyone when `server.metrics_public` is true (or auth is off). Behind the same
 * Host/Origin admission as every request.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { tokensEqual, upgradeCredentials } from './auth.js';
import { pathOf, type HttpRoute } from './http.js';

export const METRICS_PATH = '/metrics';

export interface MetricsEndpoint {
  /** The exposition text and its content type. */
  scrape(): Promise<{ contentType: string; body: string }>;
  /** `server.metrics_public`: answer without the token. */
  public: boolean;
}

function refuse(res: ServerResponse, status: number, message: string, headers: Record<string, string> = {}): void {
  res.writeHead(status, { 'content-type': 'text/plain; charset=utf-8', 'cache-control': 'no-store', ...headers });
  res.end(`${message}\n`);
}

/** Whether the request may read the metrics: the token in an `Authorization: Bearer` header. */
function allowed(req: IncomingMessage, token: string | null, isPublic: boolean): boolean {
  if (isPublic || token === null) return true;
  const presented = upgradeCredentials(req).header;
  return presented !== undefined && tokensEqual(presented, token);
}

export function metricsRoute(endpoint: MetricsEndpoint, token: string | null): HttpRoute {
  return (req, res) => {
    if (pathOf(req) !== METRICS_PATH) return false;
    if (req.method !== 'GET' && req.method !== 'HEAD') {
      refuse(res, 405, 'method not allowed', { allow: 'GET, HEAD' });
      return true;
    }
    if (!allowed(req, token, endpoint.public)) {
      refuse(res, 401, 'the metrics need the client token (Authorization: Bearer TOKEN), or server.metrics_public', {
        'www-authenticate': 'Bearer realm="agentd"',
      });
      return true;
    }
    endpoint.scrape().then(
      ({ contentType, body }) => {
        res.writeHead(200, { 'content-type': contentType, 'cache-control': 'no-store', 'content-length': String(Buffer.byteLength(body)) });
        res.end(req.method === 'HEAD' ? undefined : body);
      },
      (err: unknown) => refuse(res, 500, `collecting the metrics failed: ${(err as Error)?.message ?? String(err)}`),
    );
    return true;
  };
}
