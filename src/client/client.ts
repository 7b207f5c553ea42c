/**
 * A resilient agentd client: one `Connection` at a time, re-opened with exponential
 * backoff when it drops, re-attaching every attached session with `after_sequence` set
 * to the last sequence delivered — so the `batch` stream seen by the user of this class
 * is, per session, in order with no duplicate and no gap (gaps are filled from `history`).
 */
import type {
  Admitted,
  Attached,
  BatchFrame,
  CreateSessionConfig,
  ErrorFrame,
  HistoryFrame,
  Queued,
  SessionDescriptor,
  Submission,
} from '../../protocol/index.js';
import { Connection, type ConnectOptions } from './connection.js';
import { Emitter } from './emitter.js';
import { ConnectionError, ServerError, describeError } from './errors.js';

/** What AgentdClient needs of a connection (Connection implements it; tests may fake it). */
export interface ConnectionLike {
  readonly events: Connection['events'];
  readonly server: string;
  readonly isOpen: boolean;
  createSession(config?: CreateSessionConfig): Promise<SessionDescriptor>;
  listSessions(options?: { limit?: number; before?: string }): Promise<{
    sessions: SessionDescriptor[];
    next_before: string | null;
  }>;
  attach(sessionId: string, options?: { replay_batches?: number; after_sequence?: number }): Promise<Attached>;
  detach(sessionId: string): Promise<void>;
  history(sessionId: string, beforeSequence: number, limit?: number): Promise<HistoryFrame>;
  submit(sessionId: string, submission: Submission): Promise<Queued>;
  close(): void;
}

export interface BackoffOptions {
  initialMs?: number;
  maxMs?: number;
  factor?: number;
  /** 0..1: each delay is multiplied by a random factor in [1-jitter, 1]. */
  jitter?: number;
}

export interface ClientOptions extends ConnectOptions {
  backoff?: BackoffOptions;
  /** Give up after this many failed reconnect attempts in a row (default: never). */
  maxReconnectAttempts?: number;
  /** Called before every (re)connect: a fresh URL/token (e.g. re-read from daemon.json). */
  refresh?: () => { url: string; token?: string | undefined };
  /** Open connections with this instead of Connection.open (tests). */
  connect?: (options: ConnectOptions) => Promise<ConnectionLike>;
}

export type ClientState =
  | { kind: 'idle' }
  | { kind: 'connecting' }
  | { kind: 'connected'; server: string }
  | { kind: 'reconnecting'; attempt: number; delayMs: number; retryAt: number; error: string }
  | { kind: 'closed'; error?: string };

export type ClientEvents = {
  state: [ClientState];
  /** Batches of attached sessions: per session in sequence order, no duplicates. */
  batch: [BatchFrame];
  /** An attach (first, or again after a reconnect) was answered. */
  attached: [Attached, { resumed: boolean }];
  admitted: [Admitted];
  /** Unsolicited server errors, and attached sessions lost on reconnect. */
  error: [ErrorFrame];
  warning: [string];
};

interface Subscription {
  sessionId: string;
  replayBatches: number;
  /** Last sequence delivered (or the baseline the server starts after). */
  lastSeq: number | null;
  /** false until the baseline is confirmed; an untrusted baseline accepts any next batch. */
  trusted: boolean;
  /** Batches held while the attach answer or a gap fill is outstanding. */
  holding: boolean;
  buffer: BatchFrame[];
}

/** Delay before reconnect attempt `attempt` (1-based). */
export function backoffDelay(attempt: number, options: BackoffOptions = {}, random = Math.random): number {
  const initial = options.initialMs ?? 200;
  const max = options.maxMs ?? 5000;
  const factor = options.factor ?? 2;
  const jitter = options.jitter ?? 0.2;
  const base = Math.min(max, initial * factor ** Math.max(0, attempt - 1));
  return Math.round(base * (1 - jitter * random()));
}

export class AgentdClient {
  readonly events = new Emitter<ClientEvents>();
  private conn: ConnectionLike | null = null;
  private state: ClientState = { kind: 'idle' };
  private readonly subs = new Map<string, Subscription>();
  private reconnectTimer: NodeJS.Timeout | undefined;
  private attempt = 0;
  private closedByUser = false;

  constructor(private readonly options: ClientOptions) {}

  get currentState(): ClientState {
    return this.state;
  }

  get connected(): boolean {
    return this.state.kind === 'connected' && this.conn !== null && this.conn.isOpen;
  }

  /** The last sequence delivered for an attached session. */
  lastSequence(sessionId: string): number | null {
    return this.subs.get(sessionId)?.lastSeq ?? null;
  }

  /** Open the first connection. Rejects (ConnectionError) when it fails; no retry. */
  async start(): Promise<void> {
    this.setState({ kind: 'connecting' });
    try {
      this.adopt(await this.open());
    } catch (err) {
      this.setState({ kind: 'closed', error: describeError(err) });
      throw err;
    }
  }

  /** Close for good (no reconnect). */
  close(): void {
    this.closedByUser = true;
    clearTimeout(this.reconnectTimer);
    const conn = this.conn;
    this.conn = null;
    conn?.close();
    this.setState({ kind: 'closed' });
  }

  private open(): Promise<ConnectionLike> {
    const connect = this.options.connect ?? ((o: ConnectOptions) => Connection.open(o));
    let options: ConnectOptions = this.options;
    if (this.options.refresh) {
      try {
        const fresh = this.options.refresh();
        options = { ...this.options, url: fresh.url };
        if (fresh.token !== undefined) options.token = fresh.token;
      } catch {
        /* keep the previous endpoint */
      }
    }
    return connect(options);
  }

  private setState(state: ClientState): void {
    this.state = state;
    this.events.emit('state', state);
  }

  private adopt(conn: ConnectionLike): void {
    this.conn = conn;
    this.attempt = 0;
    conn.events.on('batch', (b) => {
      if (this.conn === conn) this.onBatch(b);
    });
    conn.events.on('admitted', (a) => {
      if (this.conn === conn) this.events.emit('admitted', a);
    });
    conn.events.on('error', (e) => {
      if (this.conn === conn) this.events.emit('error', e);
    });
    conn.events.on('warning', (w) => this.events.emit('warning', w));
    conn.events.on('close', (err) => {
      if (this.conn !== conn) return;
      this.conn = null;
      if (this.closedByUser) return;
      if (!err.retryable) {
        this.setState({ kind: 'closed', error: err.message });
        return;
      }
      this.scheduleReconnect(err.message);
    });
    this.setState({ kind: 'connected', server: conn.server });
  }

  private scheduleReconnect(error: string): void {
    if (this.closedByUser) return;
    this.attempt += 1;
    const max = this.options.maxReconnectAttempts;
    if (max !== undefined && this.attempt > max) {
      this.setState({ kind: 'closed', error: `gave up reconnecting: ${error}` });
      return;
    }
    const delayMs = backoffDelay(this.attempt, this.options.backoff);
    this.setState({ kind: 'reconnecting', attempt: this.attempt, delayMs, retryAt: Date.now() + delayMs, error });
    for (const sub of this.subs.values()) {
      sub.holding = false;
      sub.buffer = [];
    }
    clearTimeout(this.reconnectTimer);
    this.reconnectTimer = setTimeout(() => void this.reconnect(), delayMs);
  }

  /** Skip the backoff wait and try to reconnect now (no-op unless reconnecting). */
  reconnectNow(): void {
    if (this.state.kind !== 'reconnecting') return;
    clearTimeout(this.reconnectTimer);
    void this.reconnect();
  }

  private async reconnect(): Promise<void> {
    if (this.closedByUser) return;
    let conn: ConnectionLike;
    try {
      conn = await this.open();
    } catch (err) {
      if (this.closedByUser) return;
      if (err instanceof ConnectionError && !err.retryable) {
        this.setState({ kind: 'closed', error: err.message });
        return;
      }
      this.scheduleReconnect(describeError(err));
      return;
    }
    if (this.closedByUser) {
      conn.close();
      return;
    }
    this.adopt(conn);
    // Re-attach every session, resuming after the last sequence we delivered.
    for (const sub of [...this.subs.values()]) {
      void this.attachSub(conn, sub, true).catch((err: unknown) => {
        if (err instanceof ServerError && err.code === 'unknown_session') {
          this.subs.delete(sub.sessionId);
          this.events.emit('error', {
            type: 'error',
            code: 'unknown_session',
            message: `session ${sub.sessionId} is gone: ${err.message}`,
          });
        } else if (this.conn === conn) {
          this.events.emit('warning', `re-attaching ${sub.sessionId} failed: ${describeError(err)}`);
        }
      });
    }
  }

  private requireConn(): ConnectionLike {
    if (!this.conn || !this.conn.isOpen || this.state.kind !== 'connected') {
      const why = this.state.kind === 'reconnecting' ? 'reconnecting to the daemon' : 'not connected';
      throw new ConnectionError(why);
    }
    return this.conn;
  }

  /**
   * Attach to a session: replays the last `replayBatches` batches (or, with
   * `afterSequence`, every batch after it), then streams live. Re-attached by itself
   * after a reconnect.
   */
  async attach(sessionId: string, options: { replayBatches?: number; afterSequence?: number } = {}): Promise<Attached> {
    const conn = this.requireConn();
    const sub: Subscription = {
      sessionId,
      replayBatches: options.replayBatches ?? 100,
      lastSeq: options.afterSequence ?? null,
      trusted: options.afterSequence !== undefined,
      holding: true,
      buffer: [],
    };
    this.subs.set(sessionId, sub);
    try {
      return await this.attachSub(conn, sub, false);
    } catch (err) {
      if (this.subs.get(sessionId) === sub) this.subs.delete(sessionId);
      throw err;
    }
  }

  private async attachSub(conn: ConnectionLike, sub: Subscription, resumed: boolean): Promise<Attached> {
    sub.holding = true;
    sub.buffer = [];
    const opts: { replay_batches?: number; after_sequence?: number } =
      sub.lastSeq !== null ? { after_sequence: sub.lastSeq } : { replay_batches: sub.replayBatches };
    let attached: Attached;
    try {
      attached = await conn.attach(sub.sessionId, opts);
    } catch (err) {
      sub.holding = false;
      sub.buffer = [];
      throw err;
    }
    if (this.subs.get(sub.sessionId) !== sub || this.conn !== conn) return attached;
    if (sub.lastSeq === null) {
      // Fresh attach: replay starts at the oldest batch sent (or 1), live after head.
      if (sub.replayBatches === 0) {
        sub.lastSeq = attached.head_sequence;
        sub.trusted = true;
      } else {
        sub.lastSeq = (attached.next_before_sequence ?? 1) - 1;
        sub.trusted = false;
      }
    } else {
      sub.trusted = true; // the server sends exactly the batches after after_sequence
    }
    this.events.emit('attached', attached, { resumed });
    this.release(sub);
    return attached;
  }

  /** Stop holding a subscription's batches and deliver what was buffered. */
  private release(sub: Subscription): void {
    sub.holding = false;
    const buffered = sub.buffer.sort((a, b) => a.sequence - b.sequence);
    sub.buffer = [];
    for (const b of buffered) this.deliver(sub, b);
  }

  private onBatch(batch: BatchFrame): void {
    const sub = this.subs.get(batch.session_id);
    if (sub) this.deliver(sub, batch);
  }

  private deliver(sub: Subscription, batch: BatchFrame): void {
    if (sub.holding) {
      sub.buffer.push(batch);
      return;
    }
    if (sub.lastSeq !== null && batch.sequence <= sub.lastSeq) {
      if (sub.trusted) return; // duplicate
      // Untrusted baseline: accept the stream as the server starts it.
    }
    if (sub.lastSeq !== null && sub.trusted && batch.sequence > sub.lastSeq + 1) {
      sub.holding = true;
      sub.buffer.push(batch);
      void this.fillGap(sub, batch.sequence);
      return;
    }
    sub.lastSeq = batch.sequence;
    sub.trusted = true;
    this.events.emit('batch', batch);
  }

  private async fillGap(sub: Subscription, before: number): Promise<void> {
    const conn = this.conn;
    const from = sub.lastSeq ?? 0;
    try {
      if (!conn) throw new ConnectionError('not connected');
      const limit = Math.min(1000, before - from - 1);
      const h = await conn.history(sub.sessionId, before, limit);
      if (this.subs.get(sub.sessionId) !== sub || this.conn !== conn) return;
      const got = h.batches.filter((b) => b.sequence > from && b.sequence < before).sort((a, b) => a.sequence - b.sequence);
      if (got.length === 0 || got[0]!.sequence !== from + 1) throw new Error(`history did not cover ${from + 1}..${before - 1}`);
      for (const b of got) {
        sub.lastSeq = b.sequence;
        this.events.emit('batch', b);
      }
    } catch (err) {
      this.events.emit('warning', `missing batches ${from + 1}..${before - 1} of ${sub.sessionId}: ${describeError(err)}`);
      sub.trusted = false;
    }
    if (this.subs.get(sub.sessionId) === sub && this.conn === conn) this.release(sub);
  }

  /** Stop receiving a session's batches. */
  async detach(sessionId: string): Promise<void> {
    const had = this.subs.delete(sessionId);
    if (had && this.connected) await this.conn!.detach(sessionId).catch(() => undefined);
  }

  async createSession(config: CreateSessionConfig = {}): Promise<SessionDescriptor> {
    return this.requireConn().createSession(config);
  }

  async listSessions(
    options: { limit?: number; before?: string } = {},
  ): Promise<{ sessions: SessionDescriptor[]; next_before: string | null }> {
    return this.requireConn().listSessions(options);
  }

  /** All sessions (pages through list_sessions). */
  async listAllSessions(pageSize = 200): Promise<SessionDescriptor[]> {
    const all: SessionDescriptor[] = [];
    let before: string | undefined;
    for (;;) {
      const page = await this.listSessions(before ? { limit: pageSize, before } : { limit: pageSize });
      all.push(...page.sessions);
      if (!page.next_before || page.sessions.length === 0) return all;
      before = page.next_before;
    }
  }

  async history(sessionId: string, beforeSequence: number, limit?: number): Promise<HistoryFrame> {
    return this.requireConn().history(sessionId, beforeSequence, limit);
  }

  /** Resolves on `queued`; rejects with ServerError (busy, stopped, invalid…) or ConnectionError. */
  async submit(sessionId: string, submission: Submission): Promise<Queued> {
    return this.requireConn().submit(sessionId, submission);
  }

  /** Resolves when connected (at once if connected); rejects when the client closes for good. */
  waitConnected(): Promise<void> {
    if (this.connected) return Promise.resolve();
    return new Promise((resolve, reject) => {
      const off = this.events.on('state', (s) => {
        if (s.kind === 'connected') {
          off();
          resolve();
        } else if (s.kind === 'closed') {
          off();
          reject(new ConnectionError(s.error ?? 'connection closed', false));
        }
      });
    });
  }
}

/** A fresh client-chosen submission id (`[A-Za-z0-9._:-]`, unique per session). */
export function newSubmissionId(prefix = 'c'): string {
  return `${prefix}-${Date.now().toString(36)}-${Math.random().toString(36).slice(2, 10)}`;
}
