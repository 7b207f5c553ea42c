/**
 * The supervised LISTEN connection of a cluster node: one dedicated `pg.Client` (a
 * pooled connection cannot LISTEN) on the commit-hint channel and the lease channel. A
 * connection that errors or ends is replaced (backoff 100 ms → 2 s); after every
 * (re)connect `onConnected` runs, so the node catches up on what it may have missed
 * while it was not listening — a hint carries only a session and a sequence, the
 * batches are read from the journal, so a lost hint is never lost data.
 */
import pg from 'pg';
import { DELETE_CHANNEL } from './erase.js';
import { LEASE_CHANNEL } from './leases.js';
import { BATCH_CHANNEL } from './store.js';

export interface HintListenerOptions {
  url: string;
  applicationName?: string;
  connectTimeoutMs?: number;
  /** A commit of `sessionId` up to `sequence`. */
  onBatch(sessionId: string, sequence: number): void;
  /** A node handed leases back. */
  onLeases(nodeId: string): void;
  /** A session tree was deleted (by any node). */
  onDeleted?(sessionId: string, deleted: string[]): void;
  /** Listening (again): catch up. */
  onConnected(): void;
  onLost?(err: Error): void;
}

const MIN_BACKOFF_MS = 100;
const MAX_BACKOFF_MS = 2000;

export class HintListener {
  private client: pg.Client | null = null;
  private closed = false;
  private backoff = MIN_BACKOFF_MS;
  private timer: NodeJS.Timeout | null = null;
  private connected = false;

  constructor(private readonly options: HintListenerOptions) {}

  get isListening(): boolean {
    return this.connected;
  }

  start(): void {
    void this.connect();
  }

  private async connect(): Promise<void> {
    if (this.closed) return;
    const client = new pg.Client({
      connectionString: this.options.url,
      application_name: this.options.applicationName ?? 'agentd',
      connectionTimeoutMillis: this.options.connectTimeoutMs ?? 5000,
    });
    this.client = client;
    let failed = false;
    const fail = (err: Error): void => {
      if (failed) return;
      failed = true;
      this.connected = false;
      if (this.client === client) this.client = null;
      client.removeAllListeners('notification');
      client.end().catch(() => undefined);
      if (this.closed) return;
      this.options.onLost?.(err);
      this.timer = setTimeout(() => void this.connect(), this.backoff);
      this.backoff = Math.min(MAX_BACKOFF_MS, this.backoff * 2);
    };
    client.on('error', fail);
    client.on('end', () => fail(new Error('the LISTEN connection ended')));
    client.on('notification', (n) => {
      const payload = n.payload ?? '';
      if (n.channel === BATCH_CHANNEL) {
        const space = payload.lastIndexOf(' ');
        const sequence = Number(payload.slice(space + 1));
        if (space > 0 && Number.isInteger(sequence)) this.options.onBatch(payload.slice(0, space), sequence);
      } else if (n.channel === LEASE_CHANNEL) {
        this.options.onLeases(payload);
      } else if (n.channel === DELETE_CHANNEL) {
        const told = parseDeleted(payload);
        if (told) this.options.onDeleted?.(told.session_id, told.deleted_session_ids);
      }
    });
    try {
      await client.connect();
      await client.query(`LISTEN ${BATCH_CHANNEL}`);
      await client.query(`LISTEN ${LEASE_CHANNEL}`);
      await client.query(`LISTEN ${DELETE_CHANNEL}`);
    } catch (err) {
      fail(err as Error);
      return;
    }
    if (this.closed) {
      client.end().catch(() => undefined);
      return;
    }
    this.connected = true;
    this.backoff = MIN_BACKOFF_MS;
    this.options.onConnected();
  }

  async close(): Promise<void> {
    this.closed = true;
    if (this.timer) clearTimeout(this.timer);
    const client = this.client;
    this.client = null;
    this.connected = false;
    if (client) {
      client.removeAllListeners('end');
      await client.end().catch(() => undefined);
    }
  }
}

/** A delete notice's payload, or null when it is not one. */
function parseDeleted(payload: string): { session_id: string; deleted_session_ids: string[] } | null {
  try {
    const v = JSON.parse(payload) as { session_id?: unknown; deleted_session_ids?: unknown };
    if (typeof v.session_id !== 'string' || !Array.isArray(v.deleted_session_ids)) return null;
    const ids = v.deleted_session_ids.filter((id): id is string => typeof id === 'string');
    return { session_id: v.session_id, deleted_session_ids: ids };
  } catch {
    return null;
  }
}
