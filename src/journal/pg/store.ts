/**
 * The PostgreSQL backend of the storage seam: the SQLite journal's tables and guarantees
 * on a shared database. A commit is one transaction whose conditional head update
 * (`head_sequence = head`) runs first: it takes the session row's lock, so of two writers
 * with the same head one wins and the other finds the head moved (READ COMMITTED
 * re-checks the condition) and fails with `JournalConflictError`, leaving nothing; the
 * sequences stay gap-free. JSON is stored as text, so frames replay byte-identically.
 */
import type pg from 'pg';
import { JournalError } from '../../errors.js';
import { committedBatch } from '../batch.js';
import type { BatchWrite, CommittedBatch, QueuedEntry, StoredSession, WriteOutcome } from '../journal.js';
import { JournalConflictError, JournalFencedError, type JournalStore } from '../store.js';
import { commitFailure, isConnectionLoss, openFailure, readFailure, type CommitPhase } from './errors.js';
import { eraseSessionsPg } from './erase.js';
import { migratePg } from './migrations.js';
import { createPool, type PgPoolOptions } from './pool.js';

export interface PgStoreOptions extends PgPoolOptions {
  /** Cluster mode: every commit with batches sends `NOTIFY agentd_batches` ("SESSION SEQUENCE" of its last batch). */
  notify?: boolean;
}

/** The channel of the commit hints (payload `session_id sequence`; the batches are read from the journal). */
export const BATCH_CHANNEL = 'agentd_batches';

/** Cluster mode: the lease a commit must still hold, checked in its transaction. */
export interface Fence {
  nodeId: string;
  epoch: number;
}

/** Open the journal at `options.url`, migrating it; rejects with a typed JournalError. */
export async function openPgStore(options: PgStoreOptions): Promise<PgJournalStore> {
  const pool = createPool(options);
  try {
    const client = await pool.connect();
    try {
      await migratePg(client);
      client.release();
    } catch (err) {
      client.release(isConnectionLoss(err));
      throw err;
    }
  } catch (err) {
    await pool.end().catch(() => {});
    throw openFailure(redact(options.url), err);
  }
  return new PgJournalStore(pool, options.notify ?? false);
}

/** The URL without its password, for messages. */
function redact(url: string): string {
  return url.replace(/\/\/([^:/@]+):[^@]*@/, '//$1:***@').replace(/([?&]password=)[^&]*/i, '$1***');
}

interface SessionRow {
  session_id: string;
  created_at: string;
  head_sequence: string;
  checkpoint: string;
}
interface BatchRow {
  sequence: string;
  committed_at: string;
  events: string;
}

const SQL = {
  insertSession:
    'INSERT INTO sessions (session_id, created_at, updated_at, head_sequence, unfinished, checkpoint) VALUES ($1, $2, $2, 0, false, $3)',
  updateSession:
    'UPDATE sessions SET head_sequence = $1, updated_at = $2, unfinished = $3, checkpoint = $4 WHERE session_id = $5 AND head_sequence = $6',
  insertBatches:
    'INSERT INTO batches (session_id, sequence, committed_at, events) SELECT $1, $2::bigint + t.ord, $3, t.e FROM unnest($4::text[]) WITH ORDINALITY AS t(e, ord)',
  insertTranscript:
    'INSERT INTO transcript (session_id, idx, item) SELECT $1, $2::bigint + t.ord - 1, t.e FROM unnest($3::text[]) WITH ORDINALITY AS t(e, ord)',
  insertAdmissions: 'INSERT INTO admissions (session_id, submission_id, sequence) SELECT $1, t.e, $2 FROM unnest($3::text[]) AS t(e)',
  isAdmitted: 'SELECT 1 FROM admissions WHERE session_id = $1 AND submission_id = $2',
  setQueued:
    'UPDATE admissions SET queued = t.entry FROM unnest($2::text[], $3::text[]) AS t(id, entry) WHERE admissions.session_id = $1 AND admissions.submission_id = t.id',
  clearQueued: 'UPDATE admissions SET queued = NULL WHERE session_id = $1 AND submission_id = ANY($2::text[])',
  loadQueued: 'SELECT submission_id, queued AS entry FROM admissions WHERE session_id = $1 AND queued IS NOT NULL',
  loadSession: 'SELECT session_id, created_at, head_sequence, checkpoint FROM sessions WHERE session_id = $1',
  readTranscript: 'SELECT item FROM transcript WHERE session_id = $1 AND idx >= $2 ORDER BY idx LIMIT $3',
  readAfter: 'SELECT sequence, committed_at, events FROM batches WHERE session_id = $1 AND sequence > $2 ORDER BY sequence LIMIT $3',
  readBefore:
    'SELECT sequence, committed_at, events FROM batches WHERE session_id = $1 AND sequence < $2 ORDER BY sequence DESC LIMIT $3',
  unfinished: 'SELECT session_id FROM sessions WHERE unfinished ORDER BY ordinal',
  listFirst: 'SELECT session_id, created_at, head_sequence, checkpoint FROM sessions ORDER BY ordinal DESC LIMIT $1',
  listBefore:
    'SELECT session_id, created_at, head_sequence, checkpoint FROM sessions WHERE ordinal < (SELECT ordinal FROM sessions WHERE session_id = $2) ORDER BY ordinal DESC LIMIT $1',
  schemaVersion: 'SELECT MAX(version) AS v FROM schema_migrations',
  lease: 'SELECT node_id, epoch FROM session_leases WHERE session_id = $1 FOR SHARE',
  notify: 'SELECT pg_notify($1, $2)',
} as const;

/** A named statement: prepared once per connection. */
const named = (name: keyof typeof SQL, values: unknown[]): pg.QueryConfig => ({ name: `agentd_${name}`, text: SQL[name], values });

export class PgJournalStore implements JournalStore {
  readonly backend = 'postgres' as const;
  private closed = false;

  constructor(
    private readonly pool: pg.Pool,
    private readonly notify = false,
  ) {}

  /** The pool, for the cluster's lease statements (same connections, same timeouts). */
  get connections(): pg.Pool {
    return this.pool;
  }

  /**
   * One write in one transaction. With a `fence` (cluster mode) the transaction first
   * checks, holding the lease row's lock, that this node still holds the session's lease
   * at that epoch: else nothing is written and it rejects with JournalFencedError.
   */
  async commit(write: BatchWrite, fence?: Fence): Promise<CommittedBatch[]> {
    this.assertOpen();
    const committedAt = Date.now();
    try {
      await this.transaction(write, committedAt, fence);
    } catch (err) {
      // A connection that died while idle in the pool fails at BEGIN: nothing was sent, try a fresh one once.
      if (!(err instanceof StaleConnection)) throw err;
      await this.transaction(write, committedAt, fence, true);
    }
    return write.batches.map((events, i) => committedBatch(write.sessionId, write.head + 1 + i, committedAt, events));
  }

  /** Many sessions' writes, each in its own transaction, concurrently on the pool; one outcome per write. */
  async commitMany(writes: readonly BatchWrite[], fences: ReadonlyArray<Fence | undefined> = []): Promise<WriteOutcome[]> {
    return Promise.all(
      writes.map((w, i) =>
        this.commit(w, fences[i]).then(
          (batches): WriteOutcome => ({ ok: true, batches }),
          (error: unknown): WriteOutcome => ({ ok: false, error: error instanceof JournalError ? error : commitFailure(w.sessionId, w.head, 'write', error) }),
        ),
      ),
    );
  }

  async loadSession(sessionId: string): Promise<StoredSession | null> {
    const { rows } = await this.read<SessionRow>('loadSession', [sessionId]);
    if (!rows[0]) return null;
    // A session is loaded by the node holding its lease: no commit runs between the two reads.
    const queued = await this.read<QueuedEntry>('loadQueued', [sessionId]);
    return queued.rows.length > 0 ? { ...toStored(rows[0]), queued: queued.rows } : toStored(rows[0]);
  }

  async readAfter(sessionId: string, after: number, limit: number): Promise<CommittedBatch[]> {
    return (await this.rowsAfter(sessionId, after, limit)).map(([seq, at, events]) => committedBatch(sessionId, seq, at, events));
  }

  async readBefore(sessionId: string, before: number, limit: number): Promise<CommittedBatch[]> {
    return (await this.rowsBefore(sessionId, before, limit)).map(([seq, at, events]) => committedBatch(sessionId, seq, at, events));
  }

  /** readAfter's rows as [sequence, committed_at, events JSON] (no frame built: the worker of sync.ts sends these). */
  async rowsAfter(sessionId: string, after: number, limit: number): Promise<Array<[number, number, string]>> {
    const { rows } = await this.read<BatchRow>('readAfter', [sessionId, after, limit]);
    return rows.map(toRow);
  }

  async rowsBefore(sessionId: string, before: number, limit: number): Promise<Array<[number, number, string]>> {
    const { rows } = await this.read<BatchRow>('readBefore', [sessionId, before, limit]);
    return rows.reverse().map(toRow);
  }

  async readTranscript(sessionId: string, from = 0, limit?: number): Promise<string[]> {
    const { rows } = await this.read<{ item: string }>('readTranscript', [sessionId, from, limit ?? null]);
    return rows.map((r) => r.item);
  }

  async isAdmitted(sessionId: string, submissionId: string): Promise<boolean> {
    const { rowCount } = await this.read('isAdmitted', [sessionId, submissionId]);
    return (rowCount ?? 0) > 0;
  }

  async listSessions(limit: number, before?: string): Promise<StoredSession[]> {
    const { rows } = before ? await this.read<SessionRow>('listBefore', [limit, before]) : await this.read<SessionRow>('listFirst', [limit]);
    return rows.map(toStored);
  }

  async deleteSessions(sessionId: string): Promise<string[]> {
    this.assertOpen();
    return eraseSessionsPg(this.pool, sessionId);
  }

  async unfinishedSessions(): Promise<string[]> {
    const { rows } = await this.read<{ session_id: string }>('unfinished', []);
    return rows.map((r) => r.session_id);
  }

  async schemaVersion(): Promise<number> {
    const { rows } = await this.read<{ v: number | null }>('schemaVersion', []);
    return rows[0]?.v ?? 0;
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    try {
      await this.pool.end();
    } catch (err) {
      throw readFailure('close', err);
    }
  }

  private assertOpen(): void {
    if (this.closed) throw new JournalError('journal store is closed');
  }

  /** One commit on one connection: BEGIN, head update, inserts, COMMIT; ROLLBACK on any failure. */
  private async transaction(w: BatchWrite, committedAt: number, fence: Fence | undefined, retried = false): Promise<void> {
    let phase: CommitPhase = 'connect';
    let client: pg.PoolClient | undefined;
    try {
      client = await this.pool.connect();
      phase = 'begin';
      // READ COMMITTED whatever the server's default: a writer blocked on the row re-checks the head.
      await client.query('BEGIN ISOLATION LEVEL READ COMMITTED');
      phase = 'write';
      if (fence) await this.checkFence(client, w, fence);
      if (w.createdAt !== undefined) await client.query(named('insertSession', [w.sessionId, w.createdAt, w.checkpoint]));
      const head = w.head + w.batches.length;
      const updated = await client.query(named('updateSession', [head, committedAt, w.unfinished, w.checkpoint, w.sessionId, w.head]));
      if (updated.rowCount !== 1) throw await this.conflict(client, w);
      if (w.batches.length > 0) await client.query(named('insertBatches', [w.sessionId, w.head, committedAt, w.batches]));
      if (w.transcript.length > 0) await client.query(named('insertTranscript', [w.sessionId, w.transcriptFrom, w.transcript]));
      if (w.admissions.length > 0) await client.query(named('insertAdmissions', [w.sessionId, head, w.admissions]));
      const queued = w.queued ?? [];
      if (queued.length > 0) {
        const set = await client.query(named('setQueued', [w.sessionId, queued.map((q) => q.submission_id), queued.map((q) => q.entry)]));
        if (set.rowCount !== queued.length) throw new JournalError(`session ${w.sessionId}: a queued message has no admission`);
      }
      if (w.dequeued && w.dequeued.length > 0) await client.query(named('clearQueued', [w.sessionId, w.dequeued]));
      // Delivered to listeners when (and only if) the transaction commits.
      if (this.notify && w.batches.length > 0) await client.query(named('notify', [BATCH_CHANNEL, `${w.sessionId} ${head}`]));
      phase = 'commit';
      await client.query('COMMIT');
      client.release();
    } catch (err) {
      const lost = isConnectionLoss(err);
      const rolledBack = client !== undefined && !lost && (await client.query('ROLLBACK').then(() => true, () => false));
      // A broken connection (or one that could not roll back) is destroyed, never handed out again.
      client?.release(rolledBack ? undefined : true);
      if (lost && phase === 'begin' && !retried) throw new StaleConnection();
      throw commitFailure(w.sessionId, w.head, phase, err);
    }
  }

  /** The lease row, locked FOR SHARE until the commit ends: a takeover (which updates it) waits for this commit, or this commit sees its epoch. */
  private async checkFence(client: pg.PoolClient, w: BatchWrite, fence: Fence): Promise<void> {
    const { rows } = await client.query<{ node_id: string; epoch: string }>(named('lease', [w.sessionId]));
    const lease = rows[0];
    if (lease && lease.node_id === fence.nodeId && Number(lease.epoch) === fence.epoch) return;
    const now = lease ? `node ${lease.node_id} holds it at epoch ${lease.epoch}` : 'nobody holds it';
    throw new JournalFencedError(w.sessionId, w.head, `session ${w.sessionId}: this node's lease (epoch ${fence.epoch}) is gone: ${now}`);
  }

  /** Why the head update matched no row: the session is missing, or its head moved. */
  private async conflict(client: pg.PoolClient, w: BatchWrite): Promise<JournalConflictError> {
    const { rows } = await client.query<SessionRow>(named('loadSession', [w.sessionId]));
    const stored = rows[0];
    const why = stored
      ? `head ${w.head} is not the journal's head (${Number(stored.head_sequence)})`
      : 'does not exist';
    return new JournalConflictError(w.sessionId, w.head, `session ${w.sessionId}: ${why}`);
  }

  /** A read on any pooled connection; retried once on a connection the server had dropped. */
  private async read<R extends pg.QueryResultRow>(name: keyof typeof SQL, values: unknown[]): Promise<pg.QueryResult<R>> {
    this.assertOpen();
    try {
      return await this.pool.query<R>(named(name, values));
    } catch (first) {
      if (!isConnectionLoss(first)) throw readFailure(name, first);
      try {
        return await this.pool.query<R>(named(name, values));
      } catch (err) {
        throw readFailure(name, err);
      }
    }
  }
}

/** Internal: BEGIN failed on a dead connection; the commit is retried on a fresh one. */
class StaleConnection extends Error {}

function toStored(row: SessionRow): StoredSession {
  return {
    sessionId: row.session_id,
    createdAt: Number(row.created_at),
    headSequence: Number(row.head_sequence),
    checkpoint: row.checkpoint,
  };
}

function toRow(row: BatchRow): [number, number, string] {
  return [Number(row.sequence), Number(row.committed_at), row.events];
}
