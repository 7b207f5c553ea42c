/**
 * The page's protocol v1 connection: one WebSocket to this origin's /v1, `hello` with the
 * token (never in the URL), requests matched by `req_id`, and reconnection with backoff.
 * What to do after a (re)connect — re-attach with `after_sequence` — is the store's job.
 */
import { CLOSE_UNAUTHORIZED, PROTOCOL_VERSION, type ClientFrame, type ServerFrame } from './wire';

export type LinkStatus =
  | { state: 'connecting'; attempt: number }
  | { state: 'open' }
  | { state: 'reconnecting'; attempt: number; inMs: number }
  | { state: 'unauthorized'; message: string };

/** A request the server refused (an `error` frame with our req_id). */
export class RequestError extends Error {
  constructor(
    readonly code: string,
    message: string,
  ) {
    super(message);
  }
}

type Pending = { resolve: (f: ServerFrame) => void; reject: (e: Error) => void };
/** A client frame without its req_id (the link adds one). */
type Request = ClientFrame extends infer F ? (F extends { req_id: string } ? Omit<F, 'req_id'> : never) : never;

const BACKOFF_MS = [200, 400, 800, 1600, 3000];

export class Link {
  private ws: WebSocket | null = null;
  private nextReq = 1;
  private readonly pending = new Map<string, Pending>();
  private attempt = 0;
  private timer: ReturnType<typeof setTimeout> | undefined;
  private stopped = false;

  constructor(
    private readonly url: string,
    private readonly token: () => string | null,
    private readonly handlers: {
      status: (s: LinkStatus) => void;
      /** Called after each welcome (first connect and every reconnect). */
      ready: () => void;
      /** Frames not answering a request: batches, queued, admitted, submission errors. */
      frame: (f: ServerFrame) => void;
    },
  ) {}

  get isOpen(): boolean {
    return this.ready;
  }
  private ready = false;

  start(): void {
    this.stopped = false;
    this.open();
  }

  /** Connect again now (e.g. after the user entered a token). */
  retry(): void {
    clearTimeout(this.timer);
    this.attempt = 0;
    this.ws?.close();
    this.open();
  }

  private open(): void {
    this.handlers.status({ state: 'connecting', attempt: this.attempt });
    const ws = new WebSocket(this.url);
    this.ws = ws;
    ws.onopen = () => {
      const hello: ClientFrame = { type: 'hello', protocol: PROTOCOL_VERSION, client: 'agentd-web/1' };
      const token = this.token();
      if (token) hello.token = token;
      ws.send(JSON.stringify(hello));
    };
    ws.onmessage = (ev) => this.onFrame(JSON.parse(String(ev.data)) as ServerFrame);
    ws.onclose = (ev) => this.onClose(ws, ev.code);
  }

  private onFrame(f: ServerFrame): void {
    if (f.type === 'welcome') {
      this.ready = true;
      this.attempt = 0;
      this.handlers.status({ state: 'open' });
      this.handlers.ready();
      return;
    }
    const reqId = 'req_id' in f ? f.req_id : undefined;
    const waiter = reqId !== undefined ? this.pending.get(reqId) : undefined;
    if (waiter && reqId !== undefined) {
      this.pending.delete(reqId);
      if (f.type === 'error') waiter.reject(new RequestError(f.code, f.message));
      else waiter.resolve(f);
      // An attach answer is followed by its batches: they go to the frame handler.
      return;
    }
    if (f.type === 'error' && f.code === 'unauthorized') {
      this.handlers.status({ state: 'unauthorized', message: f.message });
      return;
    }
    this.handlers.frame(f);
  }

  private onClose(ws: WebSocket, code: number): void {
    if (this.ws !== ws) return;
    this.ready = false;
    this.ws = null;
    for (const p of this.pending.values()) p.reject(new RequestError('disconnected', 'the connection was lost'));
    this.pending.clear();
    if (this.stopped) return;
    if (code === CLOSE_UNAUTHORIZED) {
      this.handlers.status({ state: 'unauthorized', message: 'the daemon refused the token' });
      return;
    }
    const inMs = BACKOFF_MS[Math.min(this.attempt, BACKOFF_MS.length - 1)]!;
    this.attempt++;
    this.handlers.status({ state: 'reconnecting', attempt: this.attempt, inMs });
    this.timer = setTimeout(() => this.open(), inMs);
  }

  /** Send a request and wait for its answer (rejects with RequestError). */
  request<T extends ServerFrame['type']>(frame: Request, _expect: T): Promise<Extract<ServerFrame, { type: T }>> {
    return new Promise((resolve, reject) => {
      if (!this.ws || !this.ready) return reject(new RequestError('disconnected', 'not connected'));
      const req_id = `r${this.nextReq++}`;
      this.pending.set(req_id, { resolve: resolve as (f: ServerFrame) => void, reject });
      this.ws.send(JSON.stringify({ ...frame, req_id }));
    });
  }

  /** Send a frame without a req_id (submit); false when not connected. */
  send(frame: ClientFrame): boolean {
    if (!this.ws || !this.ready) return false;
    this.ws.send(JSON.stringify(frame));
    return true;
  }
}
