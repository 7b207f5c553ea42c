/**
 * The daemon's network front: one HTTP server carrying /healthz and the protocol v1
 * WebSocket endpoint at /v1 (protocol.md).
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import type { Logger } from 'pino';
import { WebSocketServer } from 'ws';
import { LIMITS, type ClientFrame } from '../../protocol/index.js';
import type { SessionHostApi } from '../session/api.js';
import { upgradeCredentials } from './auth.js';
import { Connection, type ServerStats } from './connection.js';
import { dispatchFrame } from './handlers.js';
import { httpHandler, isProtocolPath, rejectUpgrade } from './http.js';
import type { ModelCatalog } from './models.js';
import { defaultWebRoot, loadWebAssets, webHandler } from './web.js';

export { isLoopbackHost } from './auth.js';

export interface ServerOptions {
  sessions: SessionHostApi;
  /** Interface to listen on, e.g. 127.0.0.1. */
  host: string;
  /** 0 = any free port. */
  port: number;
  /** Expected client token; null disables auth (loopback only — checked by the caller). */
  token: string | null;
  /** `server` of the welcome frame, e.g. "agentd/0.1.0". */
  serverName: string;
  logger: Logger;
  /** Stop writing live batches to a client above this many buffered bytes (default 1 MiB). */
  highWaterMark?: number;
  /** Batches read from the journal at once while catching a client up (default 64). */
  pageSize?: number;
  /** Close connections that send no hello within this time (default 10 s). */
  helloTimeoutMs?: number;
  /** Extra fields of the /healthz answer (e.g. resident sessions). */
  health?: () => Record<string, unknown>;
  /** What `list_models` answers (the configured routes). */
  models?: ModelCatalog;
  /** Directory of the built web UI (default: dist/web of this package); null serves none. */
  webRoot?: string | null;
  /** Frame dispatcher (default: the protocol v1 handlers). */
  dispatch?: (conn: Connection, frame: ClientFrame) => void;
}

export interface AgentdServer {
  /** The port actually bound. */
  readonly port: number;
  /** `ws://HOST:PORT` (without the /v1 path). */
  readonly url: string;
  /** Open client connections. */
  connections(): readonly Connection[];
  /** Stop accepting connections; further frames on open ones are answered `stopped`. */
  stopAccepting(): void;
  /** Close every connection (after flushing what is queued), then the listener. */
  close(timeoutMs?: number): Promise<void>;
}

export const DEFAULT_HIGH_WATER_MARK = 1024 * 1024;
export const DEFAULT_PAGE_SIZE = 64;

/** `ws://HOST:PORT`, with brackets around an IPv6 host. */
export function wsUrl(host: string, port: number): string {
  const h = host.includes(':') && !host.startsWith('[') ? `[${host}]` : host;
  return `ws://${h}:${port}`;
}

export async function startServer(options: ServerOptions): Promise<AgentdServer> {
  const log = options.logger;
  const conns = new Set<Connection>();
  let nextConnId = 1;
  let accepting = true;
  const startedAt = Date.now();

  const health = (): Record<string, unknown> => {
    const mem = process.memoryUsage();
    let bufferedMax = 0;
    let bufferedTotal = 0;
    let attached = 0;
    let behind = 0;
    for (const c of conns) {
      bufferedMax = Math.max(bufferedMax, c.bufferedAmount);
      bufferedTotal += c.bufferedAmount;
      for (const s of c.streams()) {
        attached++;
        if (!s.live) behind++;
      }
    }
    return {
      ...options.health?.(),
      connections: conns.size,
      attachments: attached,
      attachments_catching_up: behind,
      stream_fallbacks_total: stats.fallbacks,
      buffered_bytes_max: bufferedMax,
      buffered_bytes_total: bufferedTotal,
      rss_bytes: mem.rss,
      heap_used_bytes: mem.heapUsed,
      uptime_ms: Date.now() - startedAt,
      pid: process.pid,
    };
  };

  const webRoot = options.webRoot === undefined ? defaultWebRoot() : options.webRoot;
  const http: Server = createServer(httpHandler(health, webRoot === null ? undefined : webHandler(loadWebAssets(webRoot))));
  const wss = new WebSocketServer({
    noServer: true,
    maxPayload: LIMITS.frameMaxBytes,
    perMessageDeflate: false,
    clientTracking: false,
  });

  const stats: ServerStats = { fallbacks: 0 };
  const connOptions = {
    stats,
    host: options.sessions,
    token: options.token,
    serverName: options.serverName,
    logger: log,
    highWaterMark: options.highWaterMark ?? DEFAULT_HIGH_WATER_MARK,
    pageSize: options.pageSize ?? DEFAULT_PAGE_SIZE,
    helloTimeoutMs: options.helloTimeoutMs ?? LIMITS.helloTimeoutMs,
    dispatch: options.dispatch ?? dispatchFrame,
    models: options.models,
  };

  http.on('upgrade', (req, socket: Socket, head) => {
    if (!accepting) return rejectUpgrade(socket, 503, 'Service Unavailable');
    if (!isProtocolPath(req)) return rejectUpgrade(socket, 404, 'Not Found');
    socket.setKeepAlive(true, 30_000);
    const creds = upgradeCredentials(req);
    wss.handleUpgrade(req, socket, head, (ws) => {
      const conn = new Connection(`c${nextConnId++}`, ws, creds, connOptions);
      conns.add(conn);
      ws.on('close', () => conns.delete(conn));
      conn.log.debug({ remote: req.socket.remoteAddress }, 'socket opened');
    });
  });

  await new Promise<void>((resolve, reject) => {
    const onError = (err: Error): void => reject(err);
    http.once('error', onError);
    http.listen(options.port, options.host, () => {
      http.off('error', onError);
      resolve();
    });
  });
  http.on('error', (err) => log.error({ err }, 'http server error'));
  const port = (http.address() as AddressInfo).port;

  const stopAccepting = (): void => {
    if (!accepting) return;
    accepting = false;
    http.close();
    for (const c of conns) c.beginShutdown();
  };

  return {
    port,
    url: wsUrl(options.host, port),
    connections: () => [...conns],
    stopAccepting,
    async close(timeoutMs = 2000) {
      stopAccepting();
      await Promise.all([...conns].map((c) => c.close(timeoutMs)));
      http.closeAllConnections();
      wss.close();
    },
  };
}
