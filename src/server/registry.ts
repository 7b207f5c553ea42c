/**
 * The daemon's open connections and their bounds: every TCP socket of the listener
 * (HTTP and WebSocket alike, capped by `server.max_connections`) and the WebSocket
 * clients, of which at most `server.max_unauthenticated` may be waiting to authenticate.
 */
import type { Socket } from 'node:net';
import type { ClientConnection } from './connection.js';

export interface ConnectionLimits {
  /** Most TCP connections open at once; more are answered 503 and dropped. */
  maxConnections: number;
  /** Most WebSocket clients that have not authenticated yet; more upgrades are answered 503. */
  maxUnauthenticated: number;
}

/** An over-limit socket is answered 503 and destroyed after this long if it lingers. */
export const OVER_LIMIT_LINGER_MS = 2000;

export class ConnectionRegistry {
  private readonly sockets = new Set<Socket>();
  private readonly overLimit = new WeakSet<Socket>();
  private readonly clients = new Set<ClientConnection>();
  private readonly pending = new Set<ClientConnection>();

  constructor(readonly limits: ConnectionLimits) {}

  /** A TCP connection was accepted; over the cap it is marked and will be refused. */
  addSocket(socket: Socket): void {
    if (this.sockets.size >= this.limits.maxConnections) {
      this.overLimit.add(socket);
      setTimeout(() => socket.destroy(), OVER_LIMIT_LINGER_MS).unref();
      return;
    }
    this.sockets.add(socket);
    socket.once('close', () => this.sockets.delete(socket));
  }

  /** Why a request on this socket must be refused (503), or null. */
  refusal(socket: Socket, upgrade: boolean): string | null {
    if (this.overLimit.has(socket)) return `too many connections (server.max_connections = ${this.limits.maxConnections})`;
    if (upgrade && this.pending.size >= this.limits.maxUnauthenticated) {
      return `too many clients waiting to authenticate (server.max_unauthenticated = ${this.limits.maxUnauthenticated})`;
    }
    return null;
  }

  /** A WebSocket client connected; it counts as pending until `authenticated`. */
  add(conn: ClientConnection): void {
    this.clients.add(conn);
    if (!conn.authenticated) this.pending.add(conn);
  }

  authenticated(conn: ClientConnection): void {
    this.pending.delete(conn);
  }

  remove(conn: ClientConnection): void {
    this.clients.delete(conn);
    this.pending.delete(conn);
  }

  /** Open WebSocket clients. */
  connections(): ClientConnection[] {
    return [...this.clients];
  }

  get size(): number {
    return this.clients.size;
  }

  get unauthenticated(): number {
    return this.pending.size;
  }

  get tcpConnections(): number {
    return this.sockets.size;
  }
}
