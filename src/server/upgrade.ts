/**
 * WebSocket upgrades of the daemon's port: refused with an HTTP status before the
 * handshake when the daemon is shutting down (503), over its connection limits (503), from
 * a foreign Host or Origin (403) or outside /v1 (404); else a ClientConnection.
 */
import type { IncomingMessage } from 'node:http';
import type { Socket } from 'node:net';
import type { WebSocketServer } from 'ws';
import { upgradeCredentials } from './auth.js';
import { ClientConnection, type ConnectionOptions } from './connection.js';
import { isProtocolPath, rejectUpgrade, type Admit } from './http.js';
import type { ConnectionRegistry } from './registry.js';

export interface UpgradeContext {
  wss: WebSocketServer;
  registry: ConnectionRegistry;
  admit: Admit;
  /** False once the daemon stopped accepting connections. */
  accepting: () => boolean;
  connection: ConnectionOptions;
}

export function upgradeHandler(ctx: UpgradeContext) {
  let nextConnId = 1;
  return (req: IncomingMessage, socket: Socket, head: Buffer): void => {
    if (!ctx.accepting()) return rejectUpgrade(socket, 503, 'the daemon is shutting down');
    const refused = ctx.admit(req, true);
    if (refused) return rejectUpgrade(socket, refused.status, refused.reason);
    if (!isProtocolPath(req)) return rejectUpgrade(socket, 404, 'not found');
    socket.setKeepAlive(true, 30_000);
    const creds = upgradeCredentials(req);
    ctx.wss.handleUpgrade(req, socket, head, (ws) => {
      const conn = new ClientConnection(`c${nextConnId++}`, ws, socket, creds, {
        ...ctx.connection,
        onAuthenticated: (c) => ctx.registry.authenticated(c),
      });
      ctx.registry.add(conn);
      ws.on('close', () => ctx.registry.remove(conn));
      conn.log.debug({ remote: req.socket.remoteAddress }, 'socket opened');
    });
  };
}
