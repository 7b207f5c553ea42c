/**
 * One WebSocket connection to an agentd daemon: hello/welcome handshake, requests
 * matched to answers by `req_id`, submissions matched to `queued` by submission id,
 * and the unsolicited frames (`batch`, `admitted`, `error`) as events.
 *
 * It does not reconnect; `AgentdClient` (client.ts) builds reconnection on top.
 */
import WebSocket from 'ws';
import {
  LIMITS,
  PROTOCOL_VERSION,
  parseServerFrame,
  type Admitted,
  type Attached,
  type BatchFrame,
  type CreateSessionConfig,
  type ErrorFrame,
  type HistoryFrame,
  type Queued,
  type ServerFrame,
  type SessionDescriptor,
  type Submission,
} from '../../protocol/index.js';
import { Emitter } from './emitter.js';
import { ConnectionError, ServerError } from './errors.js';

export interface ConnectOptions {
  /** `ws://host:port` or `ws://host:port/v1`; http(s) URLs are accepted too. */
  url: string;
  token?: string;
  /** Sent in `hello` as `client`, e.g. `agentd-tui/0.1.0`. */
  clientName?: string;
  /** Give up connecting (socket + welcome) after this long. Default 5000. */
  connectTimeoutMs?: number;
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
  /** The connection is gone (emitted once). */
  close: [ConnectionError];
};

/** Request frames without `req_id` (the connection assigns it). */
type RequestFrame =
  | { type: 'create_session'; config: CreateSessionConfig }
  | { type: 'list_sessions'; limit?: number; before?: string }
  | { type: 'attach'; session_id: string; replay_batches?: number; after_sequence?: number }
  | { type: 'detach'; session_id: string }
  | { type: 'history'; session_id: string; before_sequence: number; limit?: number };

const ANSWER_TYPE = {
  create_session: 'session_created',
  list_sessions: 'sessions',
  attach: 'attached',
  detach: 'detached',
  history: 'history',
} as const;

type AnswerOf<T extends RequestFrame['type']> = Extract<ServerFrame, { type: (typeof ANSWER_TYPE)[T] }>;

interface Pending<T> {
  resolve: (v: T) => void;
  reject: (e: Error) => void;
  timer: NodeJS.Timeout;
  expect?: string;
}

const KNOWN_SERVER_TYPES = new Set([
  'welcome',
  'error',
  'session_created',
  'sessions',
  'attached',
  'detached',
  'history',
  'queued',
  'admitted',
  'batch',
]);

/** Normalise a daemon URL: http→ws, and the `/v1` path when none is given. */
export function normalizeUrl(raw: string): string {
  let text = raw.trim();
  if (!/^[a-z]+:\/\//i.test(text)) text = `ws://${text}`;
  const url = new URL(text);
  if (url.protocol === 'http:') url.protocol = 'ws:';
  if (url.protocol === 'https:') url.protocol = 'wss:';
  if (url.pathname === '' || url.pathname === '/') url.pathname = '/v1';
  return url.toString();
}

/** Parse a server frame; frames of a known type that fail validation are kept, with a warning. */
export function parseServerFrameLenient(text: string): { frame: ServerFrame | null; warning?: string } {
  try {
    return { frame: parseServerFrame(text) };
  } catch (err) {
    let raw: unknown;
    try {
      raw = JSON.parse(text);
    } catch {
      return { frame: null, warning: 'server sent a frame that is not JSON' };
    }
    const type = (raw as { type?: unknown } | null)?.type;
    const why = err instanceof Error ? err.message : String(err);
    if (typeof raw === 'object' && raw !== null && typeof type === 'string' && KNOWN_SERVER_TYPES.has(type)) {
      return { frame: raw as ServerFrame, warning: `${type} frame: ${why}` };
    }
    return { frame: null, warning: why };
  }
}

function describeSocketError(url: string, err: Error & { code?: string }): string {
  if (err.code === 'ECONNREFUSED') return `cannot connect to ${url}: connection refused (is \`agentd serve\` running?)`;
  if (err.code === 'ENOTFOUND') return `cannot connect to ${url}: host not found`;
  return `cannot connect to ${url}: ${err.message}`;
}

export class Connection {
  readonly events = new Emitter<ConnectionEvents>();
  /** The `server` string of the welcome frame. */
  server = '';
  private nextReq = 1;
  private readonly pending = new Map<string, Pending<ServerFrame>>();
  private readonly pendingSubmits = new Map<string, Pending<Queued>>();
  private closed: ConnectionError | null = null;
  private pingTimer: NodeJS.Timeout | undefined;
  private alive = true;

  private constructor(
    private readonly ws: WebSocket,
    readonly url: string,
    private readonly requestTimeoutMs: number,
  ) {}

  /** Open a socket, say hello and wait for welcome. */
  static open(options: ConnectOptions): Promise<Connection> {
    const url = normalizeUrl(options.url);
    const headers: Record<string, string> = {};
    if (options.token) headers.authorization = `Bearer ${options.token}`;
    const timeoutMs = options.connectTimeoutMs ?? 5000;
    const ws = new WebSocket(url, { headers, maxPayload: LIMITS.frameMaxBytes * 2, handshakeTimeout: timeoutMs });
    const conn = new Connection(ws, url, options.requestTimeoutMs ?? 30_000);

    return new Promise<Connection>((resolve, reject) => {
      let welcomed = false;
      const fail = (err: ConnectionError) => {
        if (welcomed) return;
        welcomed = true;
        clearTimeout(timer);
        ws.removeAllListeners();
        ws.on('error', () => {});
        ws.terminate();
        reject(err);
      };
      const timer = setTimeout(() => fail(new ConnectionError(`timed out connecting to ${url}`)), timeoutMs);

      ws.on('unexpected-response', (_req, res) => {
        const status = res.statusCode ?? 0;
        if (status === 401 || status === 403) {
          fail(new ConnectionError(`unauthorized: the daemon rejected the token (HTTP ${status})`, false));
        } else {
          fail(new ConnectionError(`cannot connect to ${url}: HTTP ${status}`, status >= 500));
        }
      });
      ws.on('error', (err) => fail(new ConnectionError(describeSocketError(url, err))));
      ws.on('close', (code, reason) => {
        const r = reason.toString();
        if (code === 4401) fail(new ConnectionError(`unauthorized${r ? `: ${r}` : ''}`, false, code));
        else if (code === 4400) fail(new ConnectionError(`protocol error${r ? `: ${r}` : ''}`, false, code));
        else fail(new ConnectionError(`connection to ${url} closed during handshake (${code})`, true, code));
      });
      ws.on('open', () => {
        const hello: Record<string, unknown> = { type: 'hello', protocol: PROTOCOL_VERSION };
        if (options.clientName) hello.client = options.clientName;
        if (options.token) hello.token = options.token;
        ws.send(JSON.stringify(hello));
      });
      ws.once('message', (data) => {
        const { frame } = parseServerFrameLenient(data.toString());
        if (frame?.type === 'welcome') {
          if (frame.protocol !== PROTOCOL_VERSION) {
            fail(new ConnectionError(`server speaks protocol ${frame.protocol}, this client ${PROTOCOL_VERSION}`, false));
            return;
          }
          welcomed = true;
          clearTimeout(timer);
          conn.server = frame.server;
          ws.removeAllListeners();
          conn.wire(options.pingIntervalMs ?? 15_000);
          resolve(conn);
        } else if (frame?.type === 'error') {
          const retryable = frame.code !== 'unauthorized' && frame.code !== 'protocol';
          fail(new ConnectionError(`${frame.code}: ${frame.message}`, retryable));
        } else {
          fail(new ConnectionError(`unexpected first frame from server: ${data.toString().slice(0, 200)}`, false));
        }
      });
    });
  }

  get isOpen(): boolean {
    return this.closed === null;
  }

  private wire(pingIntervalMs: number): void {
    this.ws.on('message', (data) => this.onMessage(data.toString()));
    this.ws.on('error', () => {
      /* 'close' follows */
    });
    this.ws.on('close', (code, reason) => {
      const r = reason.toString();
      const why = r || (code === 1006 ? 'connection dropped' : `close code ${code}`);
      this.shutdown(new ConnectionError(why, code !== 4401 && code !== 4400, code));
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
      case 'queued': {
        const p = this.pendingSubmits.get(frame.submission_id);
        if (p) {
          this.pendingSubmits.delete(frame.submission_id);
          clearTimeout(p.timer);
          p.resolve(frame);
        }
        return;
      }
      case 'error': {
        if (frame.req_id !== undefined && this.pending.has(frame.req_id)) {
          const p = this.pending.get(frame.req_id)!;
          this.pending.delete(frame.req_id);
          clearTimeout(p.timer);
          p.reject(new ServerError(frame.code, frame.message, frame.req_id, frame.submission_id));
          return;
        }
        if (frame.submission_id !== undefined && this.pendingSubmits.has(frame.submission_id)) {
          const p = this.pendingSubmits.get(frame.submission_id)!;
          this.pendingSubmits.delete(frame.submission_id);
          clearTimeout(p.timer);
          p.reject(new ServerError(frame.code, frame.message, frame.req_id, frame.submission_id));
          return;
        }
        this.events.emit('error', frame);
        return;
      }
      case 'welcome':
        return;
      default: {
        const p = this.pending.get(frame.req_id);
        if (!p) return;
        this.pending.delete(frame.req_id);
        clearTimeout(p.timer);
        if (p.expect && p.expect !== frame.type) {
          p.reject(new ConnectionError(`expected ${p.expect}, server answered ${frame.type}`, false));
        } else {
          p.resolve(frame);
        }
      }
    }
  }

  private send(frame: object): void {
    if (this.closed) throw this.closed;
    this.ws.send(JSON.stringify(frame));
  }

  /** Send a request and wait for its answer (rejects with ServerError on an `error` answer). */
  request<F extends RequestFrame>(frame: F): Promise<AnswerOf<F['type']>> {
    const req_id = `r${this.nextReq++}`;
    return new Promise((resolve, reject) => {
      if (this.closed) return reject(this.closed);
      const timer = setTimeout(() => {
        this.pending.delete(req_id);
        reject(new ConnectionError(`no answer to ${frame.type} after ${this.requestTimeoutMs} ms`));
      }, this.requestTimeoutMs);
      this.pending.set(req_id, {
        resolve: resolve as (v: ServerFrame) => void,
        reject,
        timer,
        expect: ANSWER_TYPE[frame.type],
      });
      try {
        this.send({ ...frame, req_id });
      } catch (err) {
        clearTimeout(timer);
        this.pending.delete(req_id);
        reject(err as Error);
      }
    });
  }

  createSession(config: CreateSessionConfig = {}): Promise<SessionDescriptor> {
    return this.request({ type: 'create_session', config }).then((f) => f.session);
  }

  listSessions(options: { limit?: number; before?: string } = {}): Promise<{
    sessions: SessionDescriptor[];
    next_before: string | null;
  }> {
    return this.request({ type: 'list_sessions', ...options }).then((f) => ({
      sessions: f.sessions,
      next_before: f.next_before,
    }));
  }

  attach(sessionId: string, options: { replay_batches?: number; after_sequence?: number } = {}): Promise<Attached> {
    return this.request({ type: 'attach', session_id: sessionId, ...options });
  }

  detach(sessionId: string): Promise<void> {
    return this.request({ type: 'detach', session_id: sessionId }).then(() => undefined);
  }

  history(sessionId: string, beforeSequence: number, limit?: number): Promise<HistoryFrame> {
    const frame: RequestFrame = { type: 'history', session_id: sessionId, before_sequence: beforeSequence };
    if (limit !== undefined) frame.limit = limit;
    return this.request(frame);
  }

  /** Submit; resolves on `queued` (the submission entered the inbox), rejects with ServerError. */
  submit(sessionId: string, submission: Submission): Promise<Queued> {
    return new Promise((resolve, reject) => {
      if (this.closed) return reject(this.closed);
      const timer = setTimeout(() => {
        this.pendingSubmits.delete(submission.id);
        reject(new ConnectionError(`no answer to submission ${submission.id} after ${this.requestTimeoutMs} ms`));
      }, this.requestTimeoutMs);
      this.pendingSubmits.set(submission.id, { resolve, reject, timer });
      try {
        this.send({ type: 'submit', session_id: sessionId, submission });
      } catch (err) {
        clearTimeout(timer);
        this.pendingSubmits.delete(submission.id);
        reject(err as Error);
      }
    });
  }

  /** Close the socket; pending requests reject. */
  close(): void {
    if (this.closed) return;
    try {
      this.ws.close(1000, 'bye');
    } catch {
      /* ignore */
    }
    this.shutdown(new ConnectionError('connection closed by client', false, 1000));
    // Do not wait for the server's close frame.
    setTimeout(() => this.ws.terminate(), 200).unref();
  }

  private shutdown(err: ConnectionError): void {
    if (this.closed) return;
    this.closed = err;
    clearInterval(this.pingTimer);
    for (const p of this.pending.values()) {
      clearTimeout(p.timer);
      p.reject(err);
    }
    for (const p of this.pendingSubmits.values()) {
      clearTimeout(p.timer);
      p.reject(err);
    }
    this.pending.clear();
    this.pendingSubmits.clear();
    this.events.emit('close', err);
  }
}
