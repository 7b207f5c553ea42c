/**
 * One client connection: the hello/auth handshake, frame parsing and dispatch, the
 * session subscriptions of this client, and flow control of its socket.
 *
 * Flow control: every frame is written with a completion callback. When the socket's
 * buffer passes the high-water mark the connection stops reading client frames (TCP
 * backpressure on requests) and its subscriptions stop writing live batches; once the
 * buffer falls below the low-water mark, reading resumes and blocked subscriptions are
 * caught up from the journal.
 */
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
  type ServerFrame,
} from '../../protocol/index.js';
import { AgentdError } from '../errors.js';
import type { CommittedBatch, SessionHandle, SessionHostApi } from '../session/api.js';
import type { UpgradeCredentials } from './auth.js';
import { rawToString } from './frames.js';
import { checkHello, CLOSE_PROTOCOL } from './handshake.js';
import type { ModelCatalog } from './models.js';
import { Subscription, type Outlet } from './subscription.js';

export interface ConnectionOptions {
  host: SessionHostApi;
  /** Expected token; null = auth disabled. */
  token: string | null;
  /** `server` of the welcome frame, e.g. "agentd/0.1.0". */
  serverName: string;
  logger: Logger;
  /** Stop writing live batches above this many buffered bytes. */
  highWaterMark: number;
  /** Batches read from the journal at once while catching up. */
  pageSize: number;
  /** Close with 4400 when no hello arrives within this time. */
  helloTimeoutMs: number;
  /** Handles one validated frame of an authenticated connection. */
  dispatch: (conn: Connection, frame: ClientFrame) => void;
  /** Server-wide counters, shared by all connections. */
  stats: ServerStats;
  /** What `list_models` answers (absent: an `internal` error). */
  models?: ModelCatalog | undefined;
}

export interface ServerStats {
  /** Times a live stream fell behind (full socket buffer) and switched to catching up. */
  fallbacks: number;
}

type State = 'hello' | 'ready' | 'closing';

/** UTF-8 bytes of batch frames, computed once per batch object and shared by all clients. */
const encodedFrames = new WeakMap<CommittedBatch, Buffer>();

/** How often a connection with blocked subscriptions re-checks its buffer (safety net). */
const DRAIN_POLL_MS = 100;

export class Connection implements Outlet {
  private state: State = 'hello';
  private stopping = false;
  private readonly subs = new Map<string, Subscription>();
  private blocked = new Set<Subscription>();
  private readingPaused = false;
  private helloTimer: NodeJS.Timeout | undefined;
  private drainTimer: NodeJS.Timeout | undefined;
  readonly log: Logger;
  readonly highWaterMark: number;
  private readonly lowWaterMark: number;
  private readonly onFlushed = (err?: Error): void => {
    if (!err) this.checkDrain();
  };

  constructor(
    readonly id: string,
    private readonly ws: WebSocket,
    private readonly creds: UpgradeCredentials,
    readonly options: ConnectionOptions,
  ) {
    this.log = options.logger.child({ conn: id });
    this.highWaterMark = options.highWaterMark;
    this.lowWaterMark = Math.floor(options.highWaterMark / 2);
    ws.on('message', (data, isBinary) => this.onMessage(data, isBinary));
    ws.on('close', (code) => this.onClose(code));
    ws.on('error', (err) => this.log.debug({ err: err.message }, 'socket error'));
    this.helloTimer = setTimeout(() => {
      if (this.state === 'hello') this.fail('protocol', `no hello within ${options.helloTimeoutMs} ms`, CLOSE_PROTOCOL);
    }, options.helloTimeoutMs);
    this.helloTimer.unref();
  }

  get host(): SessionHostApi {
    return this.options.host;
  }

  get bufferedAmount(): number {
    return this.ws.bufferedAmount;
  }

  get isOpen(): boolean {
    return this.ws.readyState === WebSocket.OPEN;
  }

  /** Number of sessions this client is attached to. */
  get attachedCount(): number {
    return this.subs.size;
  }

  // ---------- writing ----------

  write(frame: string): void {
    this.sendData(frame);
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
    this.sendData(bytes);
  }

  /** Send a text frame; above the high-water mark, stop reading the client's frames until we drain. */
  private sendData(data: string | Buffer): void {
    if (!this.isOpen) return;
    this.ws.send(data, { binary: false }, this.onFlushed);
    if (!this.readingPaused && this.ws.bufferedAmount >= this.highWaterMark) {
      this.readingPaused = true;
      this.ws.pause();
      this.armDrainTimer();
    }
  }

  send(frame: ServerFrame): void {
    this.write(JSON.stringify(frame));
  }

  sendError(code: ErrorCode, message: string, ctx?: ErrorContext): void {
    this.send(errorFrame(code, message, ctx));
  }

  sessionStopped(sub: Subscription, reason: string): void {
    if (this.subs.get(sub.sessionId) !== sub) return;
    this.detach(sub.sessionId);
    this.sendError('stopped', reason);
  }

  wantDrain(sub: Subscription): void {
    this.blocked.add(sub);
    this.armDrainTimer();
  }

  private armDrainTimer(): void {
    if (this.drainTimer) return;
    this.drainTimer = setInterval(() => this.checkDrain(), DRAIN_POLL_MS);
    this.drainTimer.unref();
  }

  /** Called as frames are flushed: resume reading and catch up blocked subscriptions. */
  private checkDrain(): void {
    if (this.ws.readyState !== WebSocket.OPEN) return;
    if (this.ws.bufferedAmount >= this.lowWaterMark) return;
    if (this.readingPaused) {
      this.readingPaused = false;
      this.ws.resume();
    }
    if (this.blocked.size > 0) {
      const subs = [...this.blocked];
      this.blocked = new Set();
      for (const sub of subs) {
        if (this.ws.bufferedAmount >= this.highWaterMark) this.blocked.add(sub);
        else this.pumpSafely(sub);
      }
    }
    if (this.blocked.size === 0 && !this.readingPaused && this.drainTimer) {
      clearInterval(this.drainTimer);
      this.drainTimer = undefined;
    }
  }

  private pumpSafely(sub: Subscription): void {
    if (this.stopping) return; // no journal reads while the daemon shuts down
    try {
      sub.pump();
    } catch (err) {
      this.log.error({ err, session_id: sub.sessionId }, 'catch-up from the journal failed');
      this.detach(sub.sessionId);
      this.sendError('internal', `stream of session ${sub.sessionId} failed; attach again`);
    }
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
    const sub = new Subscription(this.host, handle, after, this, {
      pageSize: this.options.pageSize,
      onFallBehind: () => {
        stats.fallbacks++;
      },
    });
    this.subs.set(handle.id, sub);
    beforeStream();
    this.pumpSafely(sub);
  }

  /** Returns false when this client was not attached to the session. */
  detach(sessionId: string): boolean {
    const sub = this.subs.get(sessionId);
    if (!sub) return false;
    sub.close();
    this.subs.delete(sessionId);
    this.blocked.delete(sub);
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

  private onMessage(data: WebSocket.RawData, isBinary: boolean): void {
    if (this.state === 'closing') return;
    if (this.state === 'hello') {
      this.onHello(data, isBinary);
      return;
    }
    if (isBinary) {
      this.sendError('invalid_frame', 'binary frames are not supported; send JSON text frames');
      return;
    }
    const parsed = parseClientFrame(rawToString(data));
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
    try {
      this.options.dispatch(this, frame);
    } catch (err) {
      if (err instanceof AgentdError) {
        this.sendError(err.code, err.message, ctx);
        return;
      }
      this.log.error({ err, frame_type: frame.type }, 'frame handler failed');
      this.sendError('internal', `internal error handling ${frame.type}`, ctx);
    }
  }

  private onHello(data: WebSocket.RawData, isBinary: boolean): void {
    const result = checkHello(isBinary ? null : rawToString(data), this.options.token, this.creds);
    if (!result.ok) {
      if (result.code === 'unauthorized') this.log.info({ reason: result.message }, 'client unauthorized');
      this.fail(result.code, result.message, result.closeCode);
      return;
    }
    clearTimeout(this.helloTimer);
    this.state = 'ready';
    this.log.info({ client: result.hello.client }, 'client connected');
    this.send({ type: 'welcome', protocol: PROTOCOL_VERSION, server: this.options.serverName });
  }

  /** Send an error frame, then close with `closeCode`. */
  private fail(code: ErrorCode, message: string, closeCode: number): void {
    this.sendError(code, message);
    this.state = 'closing';
    clearTimeout(this.helloTimer);
    this.ws.close(closeCode, code);
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
      if (this.readingPaused) this.ws.resume(); // so the peer's close frame can be read
      this.state = 'closing';
      this.ws.close(CLOSE_CODES.goingAway, 'daemon shutting down');
    });
  }

  private onClose(code: number): void {
    this.state = 'closing';
    clearTimeout(this.helloTimer);
    if (this.drainTimer) clearInterval(this.drainTimer);
    this.drainTimer = undefined;
    for (const id of [...this.subs.keys()]) this.detach(id);
    this.log.info({ code }, 'client disconnected');
  }
}
