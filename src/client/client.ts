/**
 * A resilient agentd client: one `ClientConnection` at a time, re-opened with exponential
 * backoff when it drops, re-attaching every attached session with `after_sequence` set
 * to the last sequence delivered — so the `batch` stream seen by the user of this class
 * is, per session, in order with no duplicate and no gap (subscriptions.ts).
 */
import type {
  Attached,
  CreateSessionConfig,
  HistoryFrame,
  ListSessionsOptions,
  Queued,
  SessionDescriptor,
  SessionsPage,
  Submission,
  ModelsFrame,
  SessionDeleted,
} from '../../protocol/index.js';
import { backoffDelay, type BackoffOptions } from './backoff.js';
import { ClientConnection, type ConnectOptions, type ClientConnectionLike } from './connection.js';
import { Emitter } from './emitter.js';
import { ConnectionError, describeError } from './errors.js';
import type { ClientEvents, ClientState } from './events.js';
import { ClientSubscriptions } from './subscriptions.js';


export interface ClientOptions extends ConnectOptions {
  backoff?: BackoffOptions;
  /** Give up after this many failed reconnect attempts in a row (default: never). */
  maxReconnectAttempts?: number;
  /** Called before every (re)connect: a fresh URL/token (e.g. re-read from daemon.json). */
  refresh?: () => { url: string; token?: string | undefined };
  /** Open connections with this instead of ClientConnection.open (tests). */
  connect?: (options: ConnectOptions) => Promise<ClientConnectionLike>;
}

export class AgentdClient {
  readonly events = new Emitter<ClientEvents>();
  private conn: ClientConnectionLike | null = null;
  private state: ClientState = { kind: 'idle' };
  private readonly subs = new ClientSubscriptions(this.events, () => this.conn);
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
    return this.subs.lastSequence(sessionId);
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

  private open(): Promise<ClientConnectionLike> {
    const connect = this.options.connect ?? ((o: ConnectOptions) => ClientConnection.open(o));
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

  private adopt(conn: ClientConnectionLike): void {
    this.conn = conn;
    this.attempt = 0;
    conn.events.on('batch', (b) => {
      if (this.conn === conn) this.subs.onBatch(b);
    });
    conn.events.on('admitted', (a) => {
      if (this.conn === conn) this.events.emit('admitted', a);
    });
    conn.events.on('error', (e) => {
      if (this.conn === conn) this.events.emit('error', e);
    });
    conn.events.on('warning', (w) => this.events.emit('warning', w));
    conn.events.on('session_deleted', (d) => {
      if (this.conn !== conn) return;
      for (const id of d.deleted_session_ids ?? [d.session_id]) this.subs.remove(id);
      this.events.emit('session_deleted', d);
    });
    conn.events.on('close', (err) => {
      if (this.conn !== conn) return;
      this.conn = null;
      if (this.closedByUser) return;
      if (!err.retryable) {
        this.setState({ kind: 'closed', error: err.message, failure: err });
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
    this.subs.suspend();
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
    let conn: ClientConnectionLike;
    try {
      conn = await this.open();
    } catch (err) {
      if (this.closedByUser) return;
      if (err instanceof ConnectionError && !err.retryable) {
        this.setState({ kind: 'closed', error: err.message, failure: err });
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
    this.subs.resume(conn);
  }

  private requireConn(): ClientConnectionLike {
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
    return this.subs.attach(this.requireConn(), sessionId, options);
  }

  /** Stop receiving a session's batches. */
  async detach(sessionId: string): Promise<void> {
    const had = this.subs.remove(sessionId);
    if (had && this.connected) await this.conn!.detach(sessionId).catch(() => undefined);
  }

  async createSession(config: CreateSessionConfig = {}): Promise<SessionDescriptor> {
    return this.requireConn().createSession(config);
  }

  async listSessions(options: ListSessionsOptions = {}): Promise<SessionsPage> {
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

  /** The configured model routes (`list_models`). */
  async listModels(): Promise<ModelsFrame> {
    const conn = this.requireConn();
    if (!conn.listModels) throw new Error('this connection cannot list models');
    return conn.listModels();
  }

  /** `delete_session`: the session and its subagent sessions, gone for good (`force` interrupts a running turn first). */
  async deleteSession(sessionId: string, options: { force?: boolean } = {}): Promise<SessionDeleted> {
    const conn = this.requireConn();
    if (!conn.deleteSession) throw new Error('this connection cannot delete sessions');
    const answer = await conn.deleteSession(sessionId, options.force ?? false);
    for (const id of answer.deleted_session_ids ?? [sessionId]) this.subs.remove(id);
    return answer;
  }

  async history(sessionId: string, beforeSequence: number, limit?: number): Promise<HistoryFrame> {
    return this.requireConn().history(sessionId, beforeSequence, limit);
  }

  /** Resolves on `queued`; rejects with ServerError (busy, stopped, invalid…) or ConnectionError. */
  async submit(sessionId: string, submission: Submission): Promise<Queued> {
    return this.requireConn().submit(sessionId, submission);
  }

  /** Resolves when connected (at once if connected); rejects when the client is or gets closed for good. */
  waitConnected(): Promise<void> {
    if (this.connected) return Promise.resolve();
    const now = this.state;
    if (now.kind === 'closed') return Promise.reject(now.failure ?? new ConnectionError(now.error ?? 'connection closed', false));
    return new Promise((resolve, reject) => {
      const off = this.events.on('state', (s) => {
        if (s.kind === 'connected') {
          off();
          resolve();
        } else if (s.kind === 'closed') {
          off();
          reject(s.failure ?? new ConnectionError(s.error ?? 'connection closed', false));
        }
      });
    });
  }
}

/** A fresh client-chosen submission id (`[A-Za-z0-9._:-]`, unique per session). */
export function newSubmissionId(prefix = 'c'): string {
  return `${prefix}-${Date.now().toString(36)}-${Math.random().toString(36).slice(2, 10)}`;
}
