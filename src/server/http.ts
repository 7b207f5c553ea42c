/** Plain HTTP on the daemon's port: /healthz, and routing of WebSocket upgrades. */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Duplex } from 'node:stream';

/** Path of protocol v1 WebSocket connections. */
export const WS_PATH = '/v1';
export const HEALTH_PATH = '/healthz';

function pathOf(req: IncomingMessage): string {
  try {
    return new URL(req.url ?? '/', 'http://localhost').pathname;
  } catch {
    return '';
  }
}

function sendJson(res: ServerResponse, status: number, body: unknown): void {
  const text = JSON.stringify(body);
  res.writeHead(status, {
    'content-type': 'application/json; charset=utf-8',
    'content-length': Buffer.byteLength(text),
    'cache-control': 'no-store',
  });
  res.end(text);
}

/** Handler of ordinary HTTP requests. `health` builds the /healthz body; `web` serves the browser UI (true = handled). */
export function httpHandler(
  health: () => Record<string, unknown>,
  web?: (req: IncomingMessage, res: ServerResponse, path: string) => boolean,
) {
  return (req: IncomingMessage, res: ServerResponse): void => {
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
    if (web?.(req, res, path)) return;
    sendJson(res, 404, { ok: false, error: 'not found' });
  };
}

/** Refuse an upgrade request with a plain HTTP status before the handshake. */
export function rejectUpgrade(socket: Duplex, status: number, reason: string): void {
  const body = JSON.stringify({ ok: false, error: reason });
  socket.end(
    `HTTP/1.1 ${status} ${reason}\r\nConnection: close\r\nContent-Type: application/json\r\n` +
      `Content-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`,
  );
}

/** True when the upgrade request is for the protocol path. */
export function isProtocolPath(req: IncomingMessage): boolean {
  return pathOf(req) === WS_PATH;
}
