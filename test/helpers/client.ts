/**
 * A protocol v1 test client over a real socket (the `ws` package).
 *
 *   const c = await connect(daemon);                     // hello + welcome done
 *   const s = await c.createSession({ approval_policy: 'auto' });
 *   await c.attach(s.session_id);
 *   await c.submitMessage(s.session_id, 'hi');
 *   await c.waitForEvent(s.session_id, (m) => m.type === 'turn_complete');
 *
 * Every frame received is kept in `frames` (parsed JSON) and checked against the protocol
 * schema (violations collected in `invalid`).
 */
import { createHash } from 'node:crypto';
import WebSocket from 'ws';
import { parseServerFrame } from '../../protocol/index.js';
import type { Daemon } from './daemon.js';

/** A server frame as received (loosely typed for convenient assertions). */
export type Frame = Record<string, any> & { type: string };
export type Msg = Record<string, any> & { type: string };

export interface ConnectOptions {
  /** Token to present; default: the daemon's. `null` = present none. */
  token?: string | null;
  /** Where to present the token (default "hello"). */
  via?: 'hello' | 'header' | 'query';
  /** Send hello and wait for welcome (default true). */
  hello?: boolean;
  /** Extra/overridden hello fields. */
  helloFields?: Record<string, unknown>;
  /** Validate every frame against the protocol schema (default true). */
  validate?: boolean;
  /** Extra ws client options (e.g. maxPayload). */
  wsOptions?: WebSocket.ClientOptions;
  /**
   * Keep only a summary of each batch frame (events reduced to their ids and `msg.type`,
   * plus `bytes` and `digest`, the sha1 of the frame text) to save memory in long-stream
   * tests; no schema check.
   */
  light?: boolean;
}

export class TestClient {
  readonly frames: Frame[] = [];
  /** Frames that failed the protocol schema, with the reason. */
  readonly invalid: Array<{ text: string; error: string }> = [];
  /** Resolves when the socket closes. */
  readonly closed: Promise<{ code: number; reason: string }>;
  private cursor = 0;
  private waiters: Array<() => void> = [];
  private nextReq = 1;
  private isClosed = false;

  constructor(
    readonly ws: WebSocket,
    private readonly validate: boolean,
    private readonly light = false,
  ) {
    ws.on('message', (data, isBinary) => {
      const text = isBinary ? `<binary ${String((data as Buffer).length)}>` : (data as Buffer).toString('utf8');
      let frame: Frame;
      try {
        frame = JSON.parse(text) as Frame;
      } catch {
        this.invalid.push({ text, error: 'not JSON' });
        return;
      }
      if (this.light && frame.type === 'batch') {
        frame = {
          type: 'batch',
          session_id: frame.session_id,
          sequence: frame.sequence,
          committed_at: frame.committed_at,
          events: (frame.events as Frame[]).map((e) => ({
            submission_id: e.submission_id,
            turn_id: e.turn_id,
            msg: { type: e.msg.type },
          })),
          bytes: text.length,
          digest: createHash('sha1').update(text).digest('hex'),
        };
      } else if (this.validate) {
        try {
          parseServerFrame(text);
        } catch (err) {
          this.invalid.push({ text: text.slice(0, 2000), error: (err as Error).message });
        }
      }
      this.frames.push(frame);
      this.wake();
    });
    this.closed = new Promise((resolve) =>
      ws.on('close', (code, reason) => {
        this.isClosed = true;
        this.wake();
        resolve({ code, reason: reason.toString() });
      }),
    );
    ws.on('error', () => undefined);
  }

  private wake(): void {
    const w = this.waiters;
    this.waiters = [];
    for (const fn of w) fn();
  }

  /** Send a frame object (JSON-encoded) or raw text. */
  send(frame: object | string): void {
    this.ws.send(typeof frame === 'string' ? frame : JSON.stringify(frame));
  }

  /** Wait until `check` returns a value (re-checked on every frame and on close). */
  async until<T>(check: () => T | undefined, timeoutMs = 10_000, what = 'condition'): Promise<T> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const v = check();
      if (v !== undefined) return v;
      if (this.isClosed) throw new Error(`socket closed while waiting for ${what}; last frames: ${this.tail()}`);
      const left = deadline - Date.now();
      if (left <= 0) throw new Error(`timed out waiting for ${what}; last frames: ${this.tail()}`);
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, left);
        this.waiters.push(() => {
          clearTimeout(timer);
          resolve();
        });
      });
    }
  }

  private tail(): string {
    return JSON.stringify(this.frames.slice(-5)).slice(0, 2000);
  }

  /** The next frame after the read cursor (advances it). */
  next(timeoutMs = 10_000): Promise<Frame> {
    return this.until(() => (this.cursor < this.frames.length ? this.frames[this.cursor++] : undefined), timeoutMs, 'next frame');
  }

  /** Advance the cursor to the next frame matching `pred` and return it. */
  nextMatching(pred: (f: Frame) => boolean, timeoutMs = 10_000): Promise<Frame> {
    return this.until(
      () => {
        while (this.cursor < this.frames.length) {
          const f = this.frames[this.cursor++]!;
          if (pred(f)) return f;
        }
        return undefined;
      },
      timeoutMs,
      'matching frame',
    );
  }

  /** The first frame received (ever) matching `pred`; does not move the cursor. */
  waitFor(pred: (f: Frame) => boolean, timeoutMs = 10_000, what = 'frame'): Promise<Frame> {
    return this.until(() => this.frames.find(pred), timeoutMs, what);
  }

  /** Frames received after the cursor, without waiting (advances it). */
  drain(): Frame[] {
    const out = this.frames.slice(this.cursor);
    this.cursor = this.frames.length;
    return out;
  }

  /** Send a request (req_id added if missing) and wait for the frame echoing its req_id. */
  async request(frame: Record<string, unknown>, timeoutMs = 10_000): Promise<Frame> {
    const req_id = (frame.req_id as string | undefined) ?? `r${this.nextReq++}`;
    const start = this.frames.length;
    this.send({ ...frame, req_id });
    return this.until(
      () => this.frames.slice(start).find((f) => f.req_id === req_id),
      timeoutMs,
      `answer to ${String(frame.type)} ${req_id}`,
    );
  }

  /** Like request, but throws when the answer is an error frame. */
  async ok(frame: Record<string, unknown>, timeoutMs?: number): Promise<Frame> {
    const answer = await this.request(frame, timeoutMs);
    if (answer.type === 'error') throw new Error(`${String(frame.type)} failed: ${answer.code}: ${answer.message}`);
    return answer;
  }

  async createSession(config: Record<string, unknown> = { approval_policy: 'auto' }): Promise<Frame> {
    const answer = await this.ok({ type: 'create_session', config });
    return answer.session as Frame;
  }

  attach(sessionId: string, opts: { replay_batches?: number; after_sequence?: number } = {}): Promise<Frame> {
    return this.ok({ type: 'attach', session_id: sessionId, ...opts });
  }

  /** Submit an op; resolves with the queued/error answer for this submission id. */
  async submit(sessionId: string, id: string, op: Record<string, unknown>, timeoutMs = 10_000): Promise<Frame> {
    const start = this.frames.length;
    this.send({ type: 'submit', session_id: sessionId, submission: { id, op } });
    return this.until(
      () =>
        this.frames
          .slice(start)
          .find((f) => (f.type === 'queued' || f.type === 'error') && f.submission_id === id),
      timeoutMs,
      `queued/error for ${id}`,
    );
  }

  private submissionCounter = 0;

  /** Submit a message; returns its submission id. Throws unless queued. */
  async submitMessage(sessionId: string, text: string, id = `m${++this.submissionCounter}-${Date.now()}`, mode?: 'queue' | 'steer'): Promise<string> {
    const answer = await this.submit(sessionId, id, { type: 'message', text, ...(mode && { mode }) });
    if (answer.type !== 'queued') throw new Error(`message ${id} not queued: ${answer.code}: ${answer.message}`);
    return id;
  }

  /** Batch frames received for a session, in arrival order. */
  batches(sessionId: string): Frame[] {
    return this.frames.filter((f) => f.type === 'batch' && f.session_id === sessionId);
  }

  /** Event messages received for a session, in order. */
  events(sessionId: string): Msg[] {
    return this.batches(sessionId).flatMap((b) => (b.events as Array<{ msg: Msg }>).map((e) => e.msg));
  }

  /** Wait for an event of the session matching `pred`; returns its msg. */
  waitForEvent(sessionId: string, pred: (msg: Msg, event: Frame) => boolean, timeoutMs = 10_000): Promise<Msg> {
    return this.until(
      () => {
        for (const b of this.batches(sessionId)) {
          for (const e of b.events as Frame[]) if (pred(e.msg as Msg, e)) return e.msg as Msg;
        }
        return undefined;
      },
      timeoutMs,
      `event in ${sessionId}`,
    );
  }

  /** Wait for the end of the turn caused by `submissionId` (complete, interrupted or failed). */
  waitTurnEnd(sessionId: string, submissionId: string, timeoutMs = 15_000): Promise<Msg> {
    return this.waitForEvent(
      sessionId,
      (m, e) =>
        ['turn_complete', 'turn_interrupted', 'turn_failed'].includes(m.type) && e.submission_id === submissionId,
      timeoutMs,
    );
  }

  /** Wait until the highest batch sequence received for the session is ≥ `sequence`. */
  waitForSequence(sessionId: string, sequence: number, timeoutMs = 10_000): Promise<number> {
    return this.until(
      () => {
        const b = this.batches(sessionId);
        const last = b.length ? (b[b.length - 1]!.sequence as number) : 0;
        return last >= sequence ? last : undefined;
      },
      timeoutMs,
      `sequence ${sequence} of ${sessionId}`,
    );
  }

  close(): Promise<{ code: number; reason: string }> {
    if (this.ws.readyState === WebSocket.OPEN || this.ws.readyState === WebSocket.CONNECTING) this.ws.close();
    return this.closed;
  }

  /** Stop reading from the socket (a slow client): the server's writes back up. */
  pauseReading(): void {
    (this.ws as unknown as { _socket: import('node:net').Socket })._socket.pause();
  }

  resumeReading(): void {
    (this.ws as unknown as { _socket: import('node:net').Socket })._socket.resume();
  }
}

/** Open a socket to the daemon (no hello yet unless `hello` is true, the default). */
export async function connect(daemon: Pick<Daemon, 'wsUrl' | 'token'>, options: ConnectOptions = {}): Promise<TestClient> {
  const token = options.token === undefined ? daemon.token : options.token;
  const via = options.via ?? 'hello';
  let url = daemon.wsUrl;
  const wsOptions: WebSocket.ClientOptions = { ...options.wsOptions };
  if (token !== null && via === 'query') url += `?token=${encodeURIComponent(token)}`;
  if (token !== null && via === 'header') wsOptions.headers = { ...wsOptions.headers, authorization: `Bearer ${token}` };
  const ws = new WebSocket(url, wsOptions);
  const client = new TestClient(ws, options.validate ?? true, options.light ?? false);
  await new Promise<void>((resolve, reject) => {
    ws.once('open', () => resolve());
    ws.once('error', reject);
    ws.once('unexpected-response', (_req, res) => reject(new Error(`upgrade refused: HTTP ${res.statusCode}`)));
  });
  if (options.hello ?? true) {
    client.send({
      type: 'hello',
      protocol: 1,
      client: 'agentd-test/1',
      ...(token !== null && via === 'hello' && { token }),
      ...options.helloFields,
    });
    const welcome = await client.next();
    if (welcome.type !== 'welcome') throw new Error(`expected welcome, got ${JSON.stringify(welcome)}`);
  }
  return client;
}
