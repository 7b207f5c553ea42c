/**
 * A resilient agentd client: one `ClientConnection` at a time, re-opened with exponential
 * backoff when it drops — to any of its addresses (addresses.ts: the given URLs and, in
 * cluster mode, the live nodes each connection learns, so a dead node's clients fail over
 * to a live one) — re-attaching every attached session with `after_sequence` set
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
import { DaemonAddresses } from './addresses.js';
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
  /** The addresses to connect to (default: `url` alone); in cluster mode the live nodes are learned into it. */
  addresses?: DaemonAddresses;
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
  /** Where to connect; learns a cluster's live nodes. */
  readonly addresses: DaemonAddresses;
  private url: string | null = null;

  constructor(private readonly options: ClientOptions) {
    this.addresses = options.addresses ?? new DaemonAddresses([options.url]);
  }

  /** The address of the current (or last) connection. */
  get currentUrl(): string | null {
    return this.url;
  }

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

  /**
   * Open a connection to the first address that answers (addresses.ts orders them). A
   * failure retrying cannot help (a refused token) ends the round; else the last error.
   */
  private async open(): Promise<ClientConnectionLike> {
    const connect = this.options.connect ?? ((o: ConnectOptions) => ClientConnection.open(o));
    let token = this.options.token;
    if (this.options.refresh) {
      try {
        const fresh = this.options.refresh();
        this.addresses.setGiven([fresh.url]);
        if (fresh.token !== undefined) token = fresh.token;
      } catch {
        /* keep the previous endpoint */
      }
    }
    let last: unknown = new ConnectionError('no daemon address to connect to');
    for (const url of this.addresses.candidates()) {
      if (this.closedByUser) break;
      const options: ConnectOptions = { ...this.options, url };
      if (token !== undefined) options.token = token;
      try {
        const conn = await connect(options);
        this.addresses.connected(url);
        this.url = url;
        return conn;
      } catch (err) {
        last = err;
        this.addresses.failed(url);
        if (err instanceof ConnectionError && !err.retryable) break;
      }
    }
    throw last;
  }

  /** Learn the cluster's live nodes from a new connection (a single daemon names none). */
  private learnNodes(conn: ClientConnectionLike): void {
    if (!conn.listNodes) return;
    conn.listNodes().then(
      (answer) => {
        if (answer.cluster) this.addresses.learn(answer.nodes);
      },
      () => undefined, // an older daemon without list_nodes: keep the given addresses
    );
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
    const url = this.url;
    conn.events.on('close', (err) => {
      if (this.conn !== conn) return;
      this.conn = null;
      if (url !== null) this.addresses.failed(url);
      if (this.closedByUser) return;
      if (!err.retryable) {
        this.setState({ kind: 'closed', error: err.message, failure: err });
        return;
      }
      this.scheduleReconnect(err.message);
    });
    this.setState(url !== null ? { kind: 'connected', server: conn.server, url } : { kind: 'connected', server: conn.server });
    this.learnNodes(conn);
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
