/**
 * The storage seam: the journal's contract as an asynchronous interface, so the same
 * guarantees can be kept by SQLite on one machine (`sqlite-store.ts`, over `Journal`) and
 * by PostgreSQL for many nodes (`pg/`). The shapes are the SQLite journal's own
 * (`BatchWrite`, `CommittedBatch`, `StoredSession`); only the failures are refined into
 * the typed errors below. `test/journal-conformance.test.ts` runs one suite against both.
 */
import { JournalError } from '../errors.js';
import type { BatchWrite, CommittedBatch, StoredSession } from './journal.js';

export type { BatchWrite, CommittedBatch, StoredSession } from './journal.js';

/** The backends that implement the seam. */
export type JournalBackend = 'sqlite' | 'postgres';

/**
 * One journal: every session's batches, checkpoint, transcript and admissions. Opening a
 * store migrates it (each backend's `open…Store` function); a store refuses a schema newer
 * than its build. Every method rejects with a `JournalError` (or one of its subclasses
 * below) and never with anything else.
 */
export interface JournalStore {
  readonly backend: JournalBackend;

  /**
   * Write one session's batches (sequences `head + 1`, `head + 2`, …; none for a
   * checkpoint-only change), the checkpoint after them, its transcript items and admitted
   * submission ids, in one transaction, conditional on the stored head being `write.head`
   * (a first write, `createdAt` set, inserts the session row with head 0). Resolves with
   * the committed batches, frames encoded once. Rejects with nothing written:
   * `JournalConflictError` when the head (or the session's existence) is not what the
   * writer thinks, `JournalUnavailableError` when the store cannot be reached, a plain
   * `JournalError` for any other refusal (a duplicate admission or transcript index, a
   * full disk).
   */
  commit(write: BatchWrite): Promise<CommittedBatch[]>;

  /** The session row with its checkpoint, or null. */
  loadSession(sessionId: string): Promise<StoredSession | null>;
  /** Batches with sequence > `after`, ascending, at most `limit`. */
  readAfter(sessionId: string, after: number, limit: number): Promise<CommittedBatch[]>;
  /** The last `limit` batches with sequence < `before`, ascending. */
  readBefore(sessionId: string, before: number, limit: number): Promise<CommittedBatch[]>;
  /** Transcript items from index `from` (default 0), in order, at most `limit` (default all). */
  readTranscript(sessionId: string, from?: number, limit?: number): Promise<string[]>;
  /** Whether this message submission id was admitted in this session. */
  isAdmitted(sessionId: string, submissionId: string): Promise<boolean>;
  /** Sessions newest first (by creation), at most `limit`; `before` continues after that session id. */
  listSessions(limit: number, before?: string): Promise<StoredSession[]>;
  /**
   * Delete the session, its subagent sessions and all their rows in one transaction (their
   * text gone from the database files, docs/sessions.md#deleting-sessions); answers the
   * deleted ids, the session first, empty when there was no such session.
   */
  deleteSessions(sessionId: string): Promise<string[]>;
  /** Ids of sessions whose last checkpoint says they have unfinished work (turn or queue). */
  unfinishedSessions(): Promise<string[]>;
  /** The schema version the store is at (its migrations table). */
  schemaVersion(): Promise<number>;
  /** Release the store (connections, file handles); idempotent. */
  close(): Promise<void>;
}

/**
 * The stored head is not the writer's: another writer committed first, the session row is
 * missing (a write without `createdAt`) or already exists (a second `createdAt`). Nothing
 * was written; the writer must reload the session before writing again. In cluster mode
 * this is also how a fenced writer learns it lost the session.
 */
export class JournalConflictError extends JournalError {
  constructor(
    readonly sessionId: string,
    readonly head: number,
    message: string,
    cause?: unknown,
  ) {
    super(message, cause);
    this.name = 'JournalConflictError';
  }
}

/**
 * Cluster mode: the writer's lease on the session is gone (another node took it over and
 * bumped the epoch, or this node handed it back). Nothing was written; the writer must
 * stop acting for the session at once (docs/cluster.md, fencing).
 */
export class JournalFencedError extends JournalConflictError {
  constructor(sessionId: string, head: number, message: string) {
    super(sessionId, head, message);
    this.name = 'JournalFencedError';
  }
}

/**
 * The store could not be reached or dropped the connection (server down, connection
 * terminated, timeout). `outcomeUnknown` is true only when the connection was lost while
 * the transaction's COMMIT was in flight: the write may or may not have landed, so the
 * writer must reload the head before writing again (a blind retry is refused by the head
 * condition, never applied twice). Otherwise nothing was written and the next call may
 * succeed (the pool replaces dead connections).
 */
export class JournalUnavailableError extends JournalError {
  constructor(
    message: string,
    readonly outcomeUnknown: boolean,
    cause?: unknown,
  ) {
    super(message, cause);
    this.name = 'JournalUnavailableError';
  }
}
