/**
 * The daemon's network front: one HTTP server carrying /healthz and the protocol v1
 * WebSocket endpoint at /v1 (protocol.md). `startServer` wires the parts: the listener,
 * the admission of requests (limits, request-guard.ts), upgrades (upgrade.ts) and the
 * registry of connections (registry.ts).
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import type { Logger } from 'pino';
import { WebSocketServer } from 'ws';
import { LIMITS, type ClientFrame, type NodeInfo } from '../../protocol/index.js';
import { SERVER_DEFAULTS } from '../config/config.js';
import type { SessionHostApi } from '../session/api.js';
import type { ClientConnection, ConnectionOptions, ServerStats } from './connection.js';
import { dispatchFrame } from './handlers.js';
import { healthReport } from './health.js';
import { httpHandler, pathOf, type Admit, type HttpRoute } from './http.js';
import { metricsRoute, type MetricsEndpoint } from './metrics.js';
import type { ModelCatalog } from './models.js';
import { ConnectionRegistry } from './registry.js';
import { checkRequest } from './request-guard.js';
import { upgradeHandler } from './upgrade.js';
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
  /** Cluster mode: the shared secret other nodes' links authenticate with (docs/cluster.md). */
  peerToken?: string;
  /** `server` of the welcome frame, e.g. "agentd/0.1.0". */
  serverName: string;
  logger: Logger;
  /** Stop writing live batches to a client above this many buffered bytes (default 1 MiB). */
  highWaterMark?: number;
  /** Batches read from the journal at once while catching a client up (default 64). */
  pageSize?: number;
  /** Refuse and terminate connections that send no valid hello within this time (server.auth_deadline_ms). */
  helloTimeoutMs?: number;
  /** Most bytes a client may send before its hello is accepted (server.hello_max_bytes). */
  helloMaxBytes?: number;
  /** Most TCP connections at once (server.max_connections). */
  maxConnections?: number;
  /** Most WebSocket clients not yet authenticated (server.max_unauthenticated). */
  maxUnauthenticated?: number;
  /** Extra names (`name` or `name:port`) the daemon answers to (Host check). */
  allowedHosts?: readonly string[];
  /** Extra origins allowed to open WebSockets (Origin check). */
  allowedOrigins?: readonly string[];
  /** Extra fields of the /healthz answer (e.g. resident sessions). */
  health?: () => Record<string, unknown>;
  /** More HTTP routes, behind the same admission as every request. */
  routes?: readonly HttpRoute[];
  /** GET /metrics (docs/operations.md): the Prometheus text, for the token or for anyone when public. */
  metrics?: MetricsEndpoint;
  /** What `list_models` answers (the configured routes). */
  models?: ModelCatalog;
  /** Cluster mode: the live nodes `list_nodes` answers. */
  nodes?: () => Promise<NodeInfo[]>;
  /** Directory of the built web UI (default: dist/web of this package); null serves none. */
  webRoot?: string | null;
  /** Frame dispatcher (default: the protocol v1 handlers). */
  dispatch?: (conn: ClientConnection, frame: ClientFrame) => void;
}

export interface AgentdServer {
  /** The port actually bound. */
  readonly port: number;
  /** `ws://HOST:PORT` (without the /v1 path). */
  readonly url: string;
  /** Open client connections. */
  connections(): readonly ClientConnection[];
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

/** Listen on `host:port`; resolves with the bound port. */
function listen(http: Server, host: string, port: number): Promise<number> {
  return new Promise<number>((resolve, reject) => {
    const onError = (err: Error): void => reject(err);
    http.once('error', onError);
    http.listen(port, host, () => {
      http.off('error', onError);
      resolve((http.address() as AddressInfo).port);
    });
  });
}

export async function startServer(options: ServerOptions): Promise<AgentdServer> {
  const log = options.logger;
  let accepting = true;
  const startedAt = Date.now();
  const stats: ServerStats = { fallbacks: 0 };
  const registry = new ConnectionRegistry({
    maxConnections: options.maxConnections ?? SERVER_DEFAULTS.max_connections,
    maxUnauthenticated: options.maxUnauthenticated ?? SERVER_DEFAULTS.max_unauthenticated,
  });
  let port = 0; // known once listening; no request is served before
  const admit: Admit = (req, upgrade) => {
    const overLimit = registry.refusal(req.socket as Socket, upgrade);
    if (overLimit !== null) return { status: 503, reason: overLimit };
    return checkRequest(req, {
      bindHost: options.host,
      port,
      allowedHosts: options.allowedHosts ?? [],
      allowedOrigins: options.allowedOrigins ?? [],
    });
  };

  const health = (): Record<string, unknown> => healthReport(registry, stats, startedAt, options.health?.());
  const authDeadlineMs = options.helloTimeoutMs ?? SERVER_DEFAULTS.auth_deadline_ms;
  // An HTTP socket idle for the auth deadline (one that never sends a request, or a slow
  // request head) is destroyed, so idle raw sockets cannot hold connection slots; an
  // upgraded socket has no idle timeout (ws clears it).
  const http: Server = createServer(
    { headersTimeout: authDeadlineMs, requestTimeout: Math.max(30_000, authDeadlineMs), connectionsCheckingInterval: 1000 },
    httpHandler(admit, health, [
      ...(options.metrics ? [metricsRoute(options.metrics, options.token)] : []),
      ...(options.routes ?? []),
      ...webRoutes(options.webRoot),
    ]),
  );
  http.setTimeout(authDeadlineMs);
  http.on('connection', (socket: Socket) => registry.addSocket(socket));
  const wss = new WebSocketServer({
    noServer: true,
    maxPayload: LIMITS.frameMaxBytes,
    perMessageDeflate: false,
    clientTracking: false,
    // Checked by the connection (inbound.ts), which answers a typed error before the 1007 close.
    skipUTF8Validation: true,
  });
  const connection: ConnectionOptions = {
    stats,
    host: options.sessions,
    token: options.token,
    peerToken: options.peerToken,
    serverName: options.serverName,
    logger: log,
    highWaterMark: options.highWaterMark ?? DEFAULT_HIGH_WATER_MARK,
    pageSize: options.pageSize ?? DEFAULT_PAGE_SIZE,
    authDeadlineMs,
    preAuthMaxBytes: options.helloMaxBytes ?? SERVER_DEFAULTS.hello_max_bytes,
    dispatch: options.dispatch ?? dispatchFrame,
    models: options.models,
    nodes: options.nodes,
  };
  http.on('upgrade', upgradeHandler({ wss, registry, admit, accepting: () => accepting, connection }));

  // A deleted session: every client attached to it or to one of its subagent sessions is told and detached.
  const offDeleted = options.sessions.onDeleted((sessionId, deleted) => {
    for (const c of registry.connections()) c.sessionDeleted(sessionId, deleted);
  });
  http.once('close', offDeleted);

  port = await listen(http, options.host, options.port);
  http.on('error', (err) => log.error({ err }, 'http server error'));

  const stopAccepting = (): void => {
    if (!accepting) return;
    accepting = false;
    http.close();
    for (const c of registry.connections()) c.beginShutdown();
  };

  return {
    port,
    url: wsUrl(options.host, port),
    connections: () => registry.connections(),
    stopAccepting,
    async close(timeoutMs = 2000) {
      stopAccepting();
      await Promise.all(registry.connections().map((c) => c.close(timeoutMs)));
      http.closeAllConnections();
      wss.close();
    },
  };
}

/** The browser UI's route (docs/web.md), behind the same Host/Origin admission as every request. */
function webRoutes(webRoot: string | null | undefined): HttpRoute[] {
  const root = webRoot === undefined ? defaultWebRoot() : webRoot;
  if (root === null) return [];
  const serve = webHandler(loadWebAssets(root));
  return [(req, res) => serve(req, res, pathOf(req))];
}
