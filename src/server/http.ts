/**
 * Plain HTTP on the daemon's port: /healthz, and routing of WebSocket upgrades. Every
 * request first passes `admit` (connection limits, then the Host/Origin check of
 * request-guard.ts); further routes (a static web UI) plug in as `routes`.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Duplex } from 'node:stream';

/** Path of protocol v1 WebSocket connections. */
export const WS_PATH = '/v1';
export const HEALTH_PATH = '/healthz';

/** Why a request is refused before any route: an HTTP status and a short reason. */
export interface Rejection {
  status: number;
  reason: string;
}

/** Decides whether a request (or an upgrade) may reach its route. */
export type Admit = (req: IncomingMessage, upgrade: boolean) => Rejection | null;

/** A route: answers the request and returns true, or returns false to pass it on. */
export type HttpRoute = (req: IncomingMessage, res: ServerResponse) => boolean;

export function pathOf(req: IncomingMessage): string {
  try {
    return new URL(req.url ?? '/', 'http://localhost').pathname;
  } catch {
    return '';
  }
}

function sendJson(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  const text = JSON.stringify(body);
  res.writeHead(status, {
    'content-type': 'application/json; charset=utf-8',
    'content-length': String(Buffer.byteLength(text)),
    'cache-control': 'no-store',
    ...headers,
  });
  res.end(text);
}

/** Handler of ordinary HTTP requests. `health` builds the /healthz body. */
export function httpHandler(admit: Admit, health: () => Record<string, unknown>, routes: readonly HttpRoute[] = []) {
  return (req: IncomingMessage, res: ServerResponse): void => {
    const refused = admit(req, false);
    if (refused) {
      sendJson(res, refused.status, { ok: false, error: refused.reason }, { connection: 'close' });
      return;
    }
    const path = pathOf(req);
    if (path === HEALTH_PATH) {
      if (req.method !== 'GET' && req.method !== 'HEAD') {
        res.setHeader('allow', 'GET, HEAD');
        sendJson(res, 405, { ok: false, error: 'method not allowed' });
        return;
      }
      sendJson(res, 200, { ok: true, ...health() });
      return;
    }
    if (path === WS_PATH) {
      sendJson(res, 426, { ok: false, error: `connect with a WebSocket to ${WS_PATH}` });
      return;
    }
    for (const route of routes) if (route(req, res)) return;
    sendJson(res, 404, { ok: false, error: 'not found' });
  };
}

const STATUS_TEXT: Record<number, string> = {
  403: 'Forbidden',
  404: 'Not Found',
  503: 'Service Unavailable',
};

/** Refuse an upgrade request with a plain HTTP status before the handshake. */
export function rejectUpgrade(socket: Duplex, status: number, reason: string): void {
  const body = JSON.stringify({ ok: false, error: reason });
  socket.end(
    `HTTP/1.1 ${status} ${STATUS_TEXT[status] ?? 'Error'}\r\nConnection: close\r\nContent-Type: application/json\r\n` +
      `Content-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`,
  );
}

/** True when the upgrade request is for the protocol path. */
export function isProtocolPath(req: IncomingMessage): boolean {
  return pathOf(req) === WS_PATH;
}
