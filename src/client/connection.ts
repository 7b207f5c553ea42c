/**
 * One WebSocket connection to an agentd daemon: requests matched to answers by
 * `req_id`, submissions matched to `queued` by submission id, keep-alive pings, and the
 * unsolicited frames (`batch`, `admitted`, `error`) as events. Opening it (hello/welcome)
 * is handshake.ts.
 *
 * It does not reconnect; `AgentdClient` (client.ts) builds reconnection on top.
 */
import type WebSocket from 'ws';
import {
  CLOSE_CODES,
  CLOSE_PROTOCOL,
  CLOSE_UNAUTHORIZED,
  LIMITS,
  REQUEST_ANSWER,
  type Admitted,
  type AnswerOf,
  type AttachOptions,
  type Attached,
  type BatchFrame,
  type ClientFrame,
  type ClientRequest,
  type CreateSessionConfig,
  type ErrorFrame,
  type HistoryFrame,
  type ListSessionsOptions,
  type Queued,
  type ServerFrame,
  type SessionDescriptor,
  type SessionsPage,
  type Submission,
  type ModelsFrame,
  type SessionDeleted,
  type NodesFrame,
} from '../../protocol/index.js';
import { Emitter } from './emitter.js';
import { ConnectionError, FrameTooLargeError, ServerError, UnreadableFrameError } from './errors.js';
import { parseServerFrameLenient } from './frames.js';
import { DEFAULT_MAX_FRAME_BYTES, handshake, type HandshakeOptions } from './handshake.js';
import { Waiters } from './waiters.js';


export interface ConnectOptions extends HandshakeOptions {
  /** Reject a request whose answer has not come after this long. Default 30000. */
  requestTimeoutMs?: number;
  /** Ping the server this often; a connection that misses a pong is dropped. Default 15000; 0 = off. */
  pingIntervalMs?: number;
}

export type ConnectionEvents = {
  batch: [BatchFrame];
  admitted: [Admitted];
  /** An `error` frame that answers no pending request or submission. */
  error: [ErrorFrame];
  /** A frame that failed validation (it is still delivered when its type is known). */
  warning: [string];
  /** An attached session (or its parent) was deleted (`session_deleted` without `req_id`). */
  session_deleted: [SessionDeleted];
  /** The connection is gone (emitted once). */
  close: [ConnectionError];
};

/** What AgentdClient needs of a connection (ClientConnection implements it; tests may fake it). */
export interface ClientConnectionLike {
  readonly events: ClientConnection['events'];
  readonly server: string;
  readonly isOpen: boolean;
  createSession(config?: CreateSessionConfig): Promise<SessionDescriptor>;
  listSessions(options?: ListSessionsOptions): Promise<SessionsPage>;
  attach(sessionId: string, options?: AttachOptions): Promise<Attached>;
  detach(sessionId: string): Promise<void>;
  history(sessionId: string, beforeSequence: number, limit?: number): Promise<HistoryFrame>;
  submit(sessionId: string, submission: Submission): Promise<Queued>;
  /** `list_models`: the default route and every route (optional for fakes). */
  listModels?(): Promise<ModelsFrame>;
  /** `delete_session` (optional for fakes). */
  deleteSession?(sessionId: string, force?: boolean): Promise<SessionDeleted>;
  /** `list_nodes`: the cluster's live nodes (optional for fakes). */
  listNodes?(): Promise<NodesFrame>;
  close(): void;
}

export class ClientConnection implements ClientConnectionLike {
  readonly events = new Emitter<ConnectionEvents>();
  /** The `server` string of the welcome frame. */
  server = '';
  private nextReq = 1;
  /** Requests by req_id. */
  private readonly requests: Waiters<ServerFrame>;
  /** Submissions by submission id. */
  private readonly submits: Waiters<Queued>;
  private closed: ConnectionError | null = null;
  private pingTimer: NodeJS.Timeout | undefined;
  private alive = true;

  private constructor(
    private readonly ws: WebSocket,
    readonly url: string,
    requestTimeoutMs: number,
    private readonly maxFrameBytes: number,
  ) {
    this.requests = new Waiters(requestTimeoutMs);
    this.submits = new Waiters(requestTimeoutMs);
  }

  /** Open a socket, say hello and wait for welcome. */
  static open(options: ConnectOptions): Promise<ClientConnection> {
    return handshake(options, (ws, url, welcome) => {
      const conn = new ClientConnection(ws, url, options.requestTimeoutMs ?? 30_000, options.maxFrameBytes ?? DEFAULT_MAX_FRAME_BYTES);
      conn.server = welcome.server;
      conn.wire(options.pingIntervalMs ?? 15_000);
      return conn;
    });
  }

  get isOpen(): boolean {
    return this.closed === null;
  }

  private wire(pingIntervalMs: number): void {
    this.ws.on('message', (data) => this.onMessage(data.toString()));
    // A frame the socket cannot read (too large, malformed) is remembered: the close that
    // follows is then final, because the resumed stream would start at the same frame.
    let unreadable: { message: string; code: string } | null = null;
    this.ws.on('error', (err: Error & { code?: string }) => {
      if (err.code?.startsWith('WS_ERR_')) unreadable = { message: err.message, code: err.code };
      /* 'close' follows */
    });
    this.ws.on('close', (code, reason) => {
      if (unreadable) {
        const limit = unreadable.code === 'WS_ERR_UNSUPPORTED_MESSAGE_LENGTH' ? ` (limit ${this.maxFrameBytes} bytes)` : '';
        this.shutdown(new UnreadableFrameError(`the server sent a frame this client cannot take: ${unreadable.message}${limit}`, unreadable.code, code));
        return;
      }
      const r = reason.toString();
      const why = r || (code === 1006 ? 'connection dropped' : `close code ${code}`);
      this.shutdown(new ConnectionError(why, code !== CLOSE_UNAUTHORIZED && code !== CLOSE_PROTOCOL, code));
    });
    this.ws.on('pong', () => {
      this.alive = true;
    });
    if (pingIntervalMs > 0) {
      this.pingTimer = setInterval(() => {
        if (!this.alive) {
          this.ws.terminate();
          return;
        }
        this.alive = false;
        try {
          this.ws.ping();
        } catch {
          /* closing */
        }
      }, pingIntervalMs);
      this.pingTimer.unref();
    }
  }

  private onMessage(text: string): void {
    const { frame, warning } = parseServerFrameLenient(text);
    if (warning) this.events.emit('warning', warning);
    if (!frame) return;
    switch (frame.type) {
      case 'batch':
        this.events.emit('batch', frame);
        return;
      case 'admitted':
        this.events.emit('admitted', frame);
        return;
      case 'queued':
        this.submits.take(frame.submission_id)?.resolve(frame);
        return;
      case 'error': {
        const waiter =
          (frame.req_id !== undefined ? this.requests.take(frame.req_id) : undefined) ??
          (frame.submission_id !== undefined ? this.submits.take(frame.submission_id) : undefined);
        if (waiter) waiter.reject(new ServerError(frame.code, frame.message, frame.req_id, frame.submission_id));
        else this.events.emit('error', frame);
        return;
      }
      case 'welcome':
        return;
      case 'session_deleted':
        if (frame.req_id === undefined) {
          this.events.emit('session_deleted', frame);
          return;
        }
        this.requests.take(frame.req_id)?.resolve(frame);
        return;
      default: {
        const p = this.requests.take(frame.req_id);
        if (!p) return;
        if (p.expect && p.expect !== frame.type) {
          p.reject(new ConnectionError(`expected ${p.expect}, server answered ${frame.type}`, false));
        } else {
          p.resolve(frame);
        }
      }
    }
  }

  /** Send a frame; throws the close reason once the connection is gone, FrameTooLargeError for a frame over the limit. */
  private send(frame: ClientFrame): void {
    if (this.closed) throw this.closed;
    const text = JSON.stringify(frame);
    const bytes = Buffer.byteLength(text);
    if (bytes > LIMITS.frameMaxBytes) throw new FrameTooLargeError(bytes, LIMITS.frameMaxBytes);
    this.ws.send(text);
  }

  /** Send a request and wait for its answer (rejects with ServerError on an `error` answer). */
  request<F extends ClientRequest>(frame: F): Promise<AnswerOf<F['type']>> {
    const req_id = `r${this.nextReq++}`;
    const answer = this.requests.wait(req_id, frame.type, () => this.send({ ...frame, req_id } as ClientFrame), REQUEST_ANSWER[frame.type]);
    return answer as Promise<AnswerOf<F['type']>>;
  }

  createSession(config: CreateSessionConfig = {}): Promise<SessionDescriptor> {
    return this.request({ type: 'create_session', config }).then((f) => f.session);
  }

  listModels(): Promise<ModelsFrame> {
    return this.request({ type: 'list_models' });
  }

  deleteSession(sessionId: string, force = false): Promise<SessionDeleted> {
    return this.request({ type: 'delete_session', session_id: sessionId, ...(force && { force }) });
  }

  listNodes(): Promise<NodesFrame> {
    return this.request({ type: 'list_nodes' });
  }

  listSessions(options: ListSessionsOptions = {}): Promise<SessionsPage> {
    return this.request({ type: 'list_sessions', ...options }).then((f) => ({
      sessions: f.sessions,
      next_before: f.next_before,
    }));
  }

  attach(sessionId: string, options: AttachOptions = {}): Promise<Attached> {
    return this.request({ type: 'attach', session_id: sessionId, ...options });
  }

  detach(sessionId: string): Promise<void> {
    return this.request({ type: 'detach', session_id: sessionId }).then(() => undefined);
  }

  history(sessionId: string, beforeSequence: number, limit?: number): Promise<HistoryFrame> {
    const frame: ClientRequest = { type: 'history', session_id: sessionId, before_sequence: beforeSequence };
    if (limit !== undefined) frame.limit = limit;
    return this.request(frame);
  }

  /** Submit; resolves on `queued` (the submission entered the inbox), rejects with ServerError. */
  submit(sessionId: string, submission: Submission): Promise<Queued> {
    return this.submits.wait(submission.id, `submission ${submission.id}`, () =>
      this.send({ type: 'submit', session_id: sessionId, submission }),
    );
  }

  /** Close the socket; pending requests reject. */
  close(): void {
    if (this.closed) return;
    try {
      this.ws.close(CLOSE_CODES.normal, 'bye');
    } catch {
      /* ignore */
    }
    this.shutdown(new ConnectionError('connection closed by client', false, CLOSE_CODES.normal));
    // Do not wait for the server's close frame.
    setTimeout(() => this.ws.terminate(), 200).unref();
  }

  private shutdown(err: ConnectionError): void {
    if (this.closed) return;
    this.closed = err;
    clearInterval(this.pingTimer);
    this.requests.rejectAll(err);
    this.submits.rejectAll(err);
    this.events.emit('close', err);
  }
}
