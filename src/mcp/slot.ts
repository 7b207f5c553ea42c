/**
 * The lifecycle of one MCP server process (or HTTP connection) as sessions see it: not
 * started until first needed, started within its startup timeout, failed (start-up
 * error, timeout, crash) with a numbered failure record, started again when next needed
 * once its backoff has passed (exponential: base·2^(n-1), capped; n counts consecutive
 * failures and is reset by a connection that stayed up for STABLE_MS). The connection
 * module, and with it the MCP SDK, is loaded at the first start: a daemon whose sessions
 * never need a server does not load it.
 */
import type { McpServerConfig } from './config.js';
import type { ConnectionHooks, LaunchContext, McpConnection } from './connection.js';
import { McpServerError } from './errors.js';

export interface BackoffOptions {
  /** First retry delay (default 1000 ms), doubled per consecutive failure. */
  baseMs: number;
  /** Longest retry delay (default 60 000 ms). */
  maxMs: number;
}

export const DEFAULT_BACKOFF: BackoffOptions = { baseMs: 1000, maxMs: 60_000 };
/** A connection up this long before it fails resets the backoff. */
const STABLE_MS = 30_000;

export type SlotState = 'idle' | 'starting' | 'ready' | 'failed' | 'closed';

export interface SlotFailure {
  /** 1, 2, 3, … per slot: a toolset reports each failure once. */
  seq: number;
  error: McpServerError;
  at: number;
  retryAt: number;
}

export class ServerSlot {
  private stateValue: SlotState = 'idle';
  private connection: McpConnection | undefined;
  private starting: Promise<McpConnection | undefined> | undefined;
  private startAbort: AbortController | undefined;
  private readyAt = 0;
  private consecutive = 0;
  private failureValue: SlotFailure | undefined;
  private failureSeq = 0;
  private startsValue = 0;
  /** Bumped whenever the tool listing may have changed (start, list_changed, failure). */
  generation = 0;

  constructor(
    readonly config: McpServerConfig,
    readonly launch: LaunchContext,
    private readonly backoff: BackoffOptions,
  ) {}

  get state(): SlotState {
    return this.stateValue;
  }
  get failure(): SlotFailure | undefined {
    return this.failureValue;
  }
  get starts(): number {
    return this.startsValue;
  }
  /** The live connection, if the server is ready. */
  get current(): McpConnection | undefined {
    return this.stateValue === 'ready' ? this.connection : undefined;
  }

  /**
   * The live connection, starting the server if it is not running and its backoff has
   * passed; undefined when it is failed (and waiting) or closed.
   */
  async ensure(now = Date.now()): Promise<McpConnection | undefined> {
    switch (this.stateValue) {
      case 'closed':
        return undefined;
      case 'ready':
        await this.connection!.settled();
        return this.current;
      case 'starting':
        return this.starting;
      case 'failed':
        if (now < this.failureValue!.retryAt) return undefined;
        return this.start();
      case 'idle':
        return this.start();
    }
  }

  private start(): Promise<McpConnection | undefined> {
    this.stateValue = 'starting';
    this.startsValue += 1;
    this.startAbort = new AbortController();
    const signal = this.startAbort.signal;
    const hooks: ConnectionHooks = {
      onToolsChanged: () => {
        this.generation += 1;
      },
      onLost: (error) => {
        // Only a connection that became ready: a start that fails reports through its rejection.
        if (conn !== undefined && this.connection === conn) this.fail(error);
      },
    };
    const opened = import('./connection.js').then(({ McpConnection }) => McpConnection.open(this.config, this.launch, hooks, signal));
    let conn: McpConnection | undefined;
    this.starting = opened.then(
      async (c) => {
        conn = c;
        this.starting = undefined;
        if (this.stateValue === 'closed') {
          await c.close();
          return undefined;
        }
        this.connection = c;
        this.stateValue = 'ready';
        this.readyAt = Date.now();
        this.generation += 1;
        return c;
      },
      (err: unknown) => {
        this.starting = undefined;
        if (this.stateValue !== 'closed') this.fail(err instanceof McpServerError ? err : new McpServerError('start_failed', this.config.name, String(err)));
        return undefined;
      },
    );
    return this.starting;
  }

  private fail(error: McpServerError): void {
    const now = Date.now();
    const wasStable = this.stateValue === 'ready' && now - this.readyAt >= STABLE_MS;
    this.consecutive = wasStable ? 1 : this.consecutive + 1;
    const delay = Math.min(this.backoff.baseMs * 2 ** (this.consecutive - 1), this.backoff.maxMs);
    this.failureValue = { seq: ++this.failureSeq, error, at: now, retryAt: now + delay };
    this.stateValue = 'failed';
    this.generation += 1;
    const conn = this.connection;
    this.connection = undefined;
    void conn?.close();
  }

  /** End the server for good (its process group included). */
  async close(): Promise<void> {
    if (this.stateValue === 'closed') return;
    const starting = this.starting;
    this.stateValue = 'closed';
    this.startAbort?.abort();
    const conn = this.connection;
    this.connection = undefined;
    await conn?.close();
    await starting; // a start in progress closes its own connection
  }
}
