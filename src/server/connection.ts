/**
 * One client connection as the server sees it (`ClientConnection`): its lifecycle (the
 * hello/auth handshake under a deadline, shutdown, close), dispatch of validated frames,
 * and the session subscriptions of this client. Sending and flow control are the
 * outbox's (outbox.ts), receiving and its bounds the inbound side's (inbound.ts).
 */
import type { Duplex } from 'node:stream';
import type { Logger } from 'pino';
import WebSocket from 'ws';
import {
  CLOSE_CODES,
  PROTOCOL_VERSION,
  errorFrame,
  parseClientFrame,
  type ClientFrame,
  type ErrorCode,
  type ErrorContext,
  type NodeInfo,
  type ServerFrame,
} from '../../protocol/index.js';
import { AgentdError } from '../errors.js';
import type { CommittedBatch, SessionHandle, SessionHostApi } from '../session/api.js';
import type { UpgradeCredentials } from './auth.js';
import { checkHello, CLOSE_PROTOCOL, PEER_FRAMES } from './handshake.js';
import { Inbound, type ReceivedFrame } from './inbound.js';
import type { ModelCatalog } from './models.js';
import { frameSocketOf, Outbox } from './outbox.js';
import { ClientSubscription, type Outlet } from './subscription.js';

/**
 * A refused client that has not authenticated is terminated once the error and close
 * frames are flushed, at the latest after this long (no 30 s close handshake).
 */
export const PRE_AUTH_CLOSE_GRACE_MS = 1000;

export interface ConnectionOptions {
  host: SessionHostApi;
  /** Expected token; null = auth disabled. */
  token: string | null;
  /** Cluster mode: the secret other nodes' links present instead of the client token. */
  peerToken?: string | undefined;
  /** `server` of the welcome frame, e.g. "agentd/0.1.0". */
  serverName: string;
  logger: Logger;
  /** Stop writing live batches (and handling requests) above this many buffered bytes. */
  highWaterMark: number;
  /** Batches read from the journal at once while catching up. */
  pageSize: number;
  /** Refuse (4400) and terminate when no valid hello arrives within this time. */
  authDeadlineMs: number;
  /** Most bytes a client may send before it has authenticated. */
  preAuthMaxBytes: number;
  /** Handles one validated frame of an authenticated connection. */
  dispatch: (conn: ClientConnection, frame: ClientFrame) => void | Promise<void>;
  /** Server-wide counters, shared by all connections. */
  stats: ServerStats;
  /** What `list_models` answers (absent: an `internal` error). */
  models?: ModelCatalog | undefined;
  /** Cluster mode: the live nodes `list_nodes` answers (absent: a single daemon, no nodes). */
  nodes?: (() => Promise<NodeInfo[]>) | undefined;
  /** Called once when the client has authenticated (welcome sent). */
  onAuthenticated?: (conn: ClientConnection) => void;
}

export interface ServerStats {
  /** Times a live stream fell behind (full socket buffer) and switched to catching up. */
  fallbacks: number;
}

type State = 'hello' | 'ready' | 'closing';

/** UTF-8 bytes of batch frames, computed once per batch object and shared by all clients. */
const encodedFrames = new WeakMap<CommittedBatch, Buffer>();

export class ClientConnection implements Outlet {
  private state: State = 'hello';
  private stopping = false;
  /** Authenticated with the cluster secret: another node's link, which may only forward messages. */
  private peer = false;
  /** The handler still awaiting (the journal), if any: later frames are handled after it. */
  private handling: Promise<void> | null = null;
  private readonly subs = new Map<string, ClientSubscription>();
  private readonly outbox: Outbox;
  private readonly inbound: Inbound;
  private deadline: NodeJS.Timeout | undefined;
  readonly log: Logger;

  constructor(
    readonly id: string,
    private readonly ws: WebSocket,
    private readonly socket: Duplex,
    private readonly creds: UpgradeCredentials,
    readonly options: ConnectionOptions,
  ) {
    this.log = options.logger.child({ conn: id });
    this.outbox = new Outbox(frameSocketOf(ws), options.highWaterMark);
    this.inbound = new Inbound(ws, socket, this.outbox, {
      preAuthMaxBytes: options.preAuthMaxBytes,
      onFrame: (frame) => this.onFrame(frame),
      onPreAuthOverflow: (bytes) => {
        if (this.state !== 'hello') return;
        this.ws.pause(); // read nothing more of it
        this.refuse('protocol', `more than ${options.preAuthMaxBytes} bytes (${bytes}) before hello`, CLOSE_CODES.tooBig);
      },
    });
    ws.on('close', (code) => this.onClose(code));
    ws.on('error', (err) => this.log.debug({ err: err.message }, 'socket error'));
    this.deadline = setTimeout(() => {
      if (this.state === 'hello') this.refuse('protocol', `no hello within ${options.authDeadlineMs} ms`, CLOSE_PROTOCOL);
    }, options.authDeadlineMs);
    this.deadline.unref();
  }

  get host(): SessionHostApi {
    return this.options.host;
  }

  get highWaterMark(): number {
    return this.outbox.highWaterMark;
  }

  get bufferedAmount(): number {
    return this.outbox.bufferedAmount;
  }

  get isOpen(): boolean {
    return this.outbox.isOpen;
  }

  /** True once the client has authenticated (welcome sent). */
  get authenticated(): boolean {
    return this.state === 'ready';
  }

  /** Number of sessions this client is attached to. */
  get attachedCount(): number {
    return this.subs.size;
  }

  // ---------- writing ----------

  write(frame: string): void {
    this.outbox.write(frame);
  }

  /**
   * Write a committed batch. Its frame is UTF-8 encoded once per batch (the same
   * CommittedBatch object is delivered to every subscriber of a commit) and the bytes are
   * shared by all clients.
   */
  writeBatch(batch: CommittedBatch): void {
    if (!this.isOpen) return;
    let bytes = encodedFrames.get(batch);
    if (!bytes) {
      bytes = Buffer.from(batch.frame, 'utf8');
      encodedFrames.set(batch, bytes);
    }
    this.outbox.write(bytes);
  }

  send(frame: ServerFrame): void {
    this.write(JSON.stringify(frame));
  }

  sendError(code: ErrorCode, message: string, ctx?: ErrorContext): void {
    this.send(errorFrame(code, message, ctx));
  }

  sessionStopped(sub: ClientSubscription, reason: string): void {
    if (this.subs.get(sub.sessionId) !== sub) return;
    this.detach(sub.sessionId);
    this.sendError('stopped', reason);
  }

  wantDrain(sub: ClientSubscription): void {
    this.outbox.whenDrained(sub, () => this.pumpSafely(sub));
  }

  private pumpSafely(sub: ClientSubscription): void {
    if (this.stopping) return; // no journal reads while the daemon shuts down
    if (this.subs.get(sub.sessionId) !== sub) return; // detached meanwhile
    sub.pump().catch((err: unknown) => {
      this.log.error({ err, session_id: sub.sessionId }, 'catch-up from the journal failed');
      if (this.subs.get(sub.sessionId) !== sub) return;
      this.detach(sub.sessionId);
      this.sendError('internal', `stream of session ${sub.sessionId} failed; attach again`);
    });
  }

  // ---------- subscriptions ----------

  /**
   * Attach to a session: subscribe (same tick as the caller read the head), then write
   * everything after `after` from the journal and go live. Replaces an earlier attach.
   * `beforeStream` runs after subscribing and before the first batch (the `attached` frame).
   */
  attach(handle: SessionHandle, after: number, beforeStream: () => void): void {
    this.detach(handle.id);
    const stats = this.options.stats;
    const sub = new ClientSubscription(this.host, handle, after, this, {
      pageSize: this.options.pageSize,
      onFallBehind: () => {
        stats.fallbacks++;
      },
    });
    this.subs.set(handle.id, sub);
    beforeStream();
    this.pumpSafely(sub);
  }

  /**
   * Sessions were deleted (`sessionId` named, `deleted` every id): if this client was
   * attached to any of them it is detached and told, once (`session_deleted`, no `req_id`).
   */
  sessionDeleted(sessionId: string, deleted: readonly string[]): void {
    let attached = false;
    for (const id of deleted) if (this.detach(id)) attached = true;
    if (attached) this.send({ type: 'session_deleted', session_id: sessionId, deleted_session_ids: [...deleted] });
  }

  /** Returns false when this client was not attached to the session. */
  detach(sessionId: string): boolean {
    const sub = this.subs.get(sessionId);
    if (!sub) return false;
    sub.close();
    this.subs.delete(sessionId);
    this.outbox.cancel(sub);
    return true;
  }

  /** Per-session stream state, for /healthz and logs. */
  streams(): Array<{ session_id: string; last_sent: number; live: boolean }> {
    return [...this.subs.values()].map((s) => ({
      session_id: s.sessionId,
      last_sent: s.lastSentSequence,
      live: s.isLive,
    }));
  }

  // ---------- reading ----------

  private onFrame(frame: ReceivedFrame): Promise<void> | undefined {
    if (this.state === 'closing') return;
    if (frame.kind === 'invalid_utf8') {
      const code = this.state === 'hello' ? 'protocol' : 'invalid_frame';
      this.sendError(code, 'text frame is not valid UTF-8');
      this.closeWith(CLOSE_CODES.invalidUtf8, 'invalid UTF-8');
      return;
    }
    if (this.state === 'hello') {
      this.onHello(frame.kind === 'text' ? frame.text : null);
      return;
    }
    if (frame.kind === 'binary') {
      this.sendError('invalid_frame', 'binary frames are not supported; send JSON text frames');
      return;
    }
    return this.onRequest(frame.text);
  }

  /** Answers the request; a Promise while its handler awaits (Inbound holds the next frames meanwhile). */
  private onRequest(text: string): Promise<void> | undefined {
    const parsed = parseClientFrame(text);
    if (!parsed.ok) {
      const { code, message, req_id, submission_id } = parsed.error;
      this.sendError(code, message, { req_id, submission_id });
      return;
    }
    const frame = parsed.frame;
    const ctx: ErrorContext = {
      req_id: 'req_id' in frame ? frame.req_id : undefined,
      submission_id: frame.type === 'submit' ? frame.submission.id : undefined,
    };
    if (this.stopping) {
      this.sendError('stopped', 'the daemon is shutting down', ctx);
      return;
    }
    // A handler that awaits the journal holds the frames after it (answers stay in request order).
    const done = this.handling ? this.handling.then(() => this.handle(frame, ctx)) : this.handle(frame, ctx);
    if (!done) return undefined;
    this.handling = done;
    void done.then(() => {
      if (this.handling === done) this.handling = null;
    });
    // Reads and the other requests hold the socket until answered (their answers can be
    // megabytes: a client that does not read is bounded by the outbox). Submissions keep
    // arriving as a burst, so a session's inbox sees them as sent (docs/protocol.md "busy");
    // each is small and answered by a small frame.
    return frame.type === 'submit' ? undefined : done;
  }

  /** The frame's handler; a Promise while it awaits (the journal), settled with its answer sent. */
  private handle(frame: ClientFrame, ctx: ErrorContext): Promise<void> | undefined {
    if (this.peer && !PEER_FRAMES.has(frame.type)) {
      this.sendError('unauthorized', `a node link (cluster secret) may not send ${frame.type}: the cluster secret is not a client token`, ctx);
      return undefined;
    }
    let answer: void | Promise<void>;
    try {
      answer = this.options.dispatch(this, frame);
    } catch (err) {
      this.handlerFailed(err, frame, ctx);
      return undefined;
    }
    if (!(answer instanceof Promise)) return undefined;
    return answer.then(
      () => {},
      (err: unknown) => this.handlerFailed(err, frame, ctx),
    );
  }

  private handlerFailed(err: unknown, frame: ClientFrame, ctx: ErrorContext): void {
    if (err instanceof AgentdError) {
      this.sendError(err.code, err.message, ctx);
      return;
    }
    this.log.error({ err, frame_type: frame.type }, 'frame handler failed');
    this.sendError('internal', `internal error handling ${frame.type}`, ctx);
  }

  private onHello(text: string | null): void {
    const result = checkHello(text, this.options.token, this.creds, this.options.peerToken);
    if (!result.ok) {
      if (result.code === 'unauthorized') this.log.info({ reason: result.message }, 'client unauthorized');
      this.refuse(result.code, result.message, result.closeCode);
      return;
    }
    clearTimeout(this.deadline);
    this.peer = result.peer;
    this.state = 'ready';
    this.inbound.authenticated();
    this.log.info({ client: result.hello.client }, 'client connected');
    this.send({ type: 'welcome', protocol: PROTOCOL_VERSION, server: this.options.serverName });
    this.options.onAuthenticated?.(this);
  }

  /**
   * Refuse a client that has not authenticated: an error frame and the close frame, then
   * the socket is terminated as soon as they are flushed — no waiting for a close
   * handshake that a client which never sent a hello may never answer.
   */
  private refuse(code: ErrorCode, message: string, closeCode: number): void {
    this.sendError(code, message);
    this.closeWith(closeCode, code);
    const terminate = (): void => this.ws.terminate();
    this.socket.once('finish', terminate);
    this.socket.end();
    setTimeout(terminate, PRE_AUTH_CLOSE_GRACE_MS).unref();
  }

  /** Stop handling frames and start the close handshake with `closeCode`. */
  private closeWith(closeCode: number, reason: string): void {
    this.state = 'closing';
    clearTimeout(this.deadline);
    this.inbound.stop();
    this.ws.close(closeCode, reason);
  }

  // ---------- lifecycle ----------

  /** Daemon shutdown begins: answer further frames with `stopped`. */
  beginShutdown(): void {
    this.stopping = true;
  }

  /** Close the socket (1001 going away); resolves when closed or after `timeoutMs`. */
  close(timeoutMs: number): Promise<void> {
    return new Promise((resolve) => {
      if (this.ws.readyState === WebSocket.CLOSED) return resolve();
      const timer = setTimeout(() => {
        this.ws.terminate();
        resolve();
      }, timeoutMs);
      this.ws.once('close', () => {
        clearTimeout(timer);
        resolve();
      });
      if (this.state !== 'closing') this.closeWith(1001, 'daemon shutting down');
    });
  }

  private onClose(code: number): void {
    this.state = 'closing';
    clearTimeout(this.deadline);
    this.inbound.stop();
    this.outbox.close();
    for (const id of [...this.subs.keys()]) this.detach(id);
    this.log.info({ code }, 'client disconnected');
  }
}
