/**
 * The SQLite backend of the storage seam: a `JournalStore` over the synchronous `Journal`
 * (results wrapped in promises), so the one conformance suite runs against SQLite and
 * PostgreSQL alike. A refused commit is classified by reading the session back (SQLite is
 * in-process and single-writer, so that read sees exactly what the failed write saw).
 */
import type Database from 'better-sqlite3';
import { JournalError } from '../errors.js';
import { Journal, type BatchWrite, type CommittedBatch, type JournalOptions, type StoredSession } from './journal.js';
import { JournalConflictError, type JournalStore } from './store.js';

/** Open (creating and migrating) the SQLite journal at `path` as a `JournalStore`. */
export async function openSqliteStore(path: string, options: JournalOptions = {}): Promise<SqliteJournalStore> {
  return new SqliteJournalStore(new Journal(path, options));
}

export class SqliteJournalStore implements JournalStore {
  readonly backend = 'sqlite' as const;
  private transcriptRange: Database.Statement<[string, number, number], string> | null = null;
  private closed = false;

  constructor(readonly journal: Journal) {}

  async commit(write: BatchWrite): Promise<CommittedBatch[]> {
    return this.call(() => {
      try {
        return this.journal.commit(write);
      } catch (err) {
        throw this.classify(write, err);
      }
    });
  }

  async loadSession(sessionId: string): Promise<StoredSession | null> {
    return this.call(() => this.journal.loadSession(sessionId));
  }

  async readAfter(sessionId: string, after: number, limit: number): Promise<CommittedBatch[]> {
    return this.call(() => this.journal.readAfter(sessionId, after, limit));
  }

  async readBefore(sessionId: string, before: number, limit: number): Promise<CommittedBatch[]> {
    return this.call(() => this.journal.readBefore(sessionId, before, limit));
  }

  async readTranscript(sessionId: string, from = 0, limit?: number): Promise<string[]> {
    return this.call(() => {
      if (from <= 0 && limit === undefined) return this.journal.loadTranscript(sessionId);
      // The Journal reads a whole transcript; a range is one indexed query on its database.
      this.transcriptRange ??= this.journal.withDatabase((db) =>
        db.prepare<[string, number, number], string>('SELECT item FROM transcript WHERE session_id = ? AND idx >= ? ORDER BY idx LIMIT ?').pluck(),
      );
      return this.transcriptRange.all(sessionId, from, limit ?? -1);
    });
  }

  async isAdmitted(sessionId: string, submissionId: string): Promise<boolean> {
    return this.call(() => this.journal.isAdmitted(sessionId, submissionId));
  }

  async listSessions(limit: number, before?: string): Promise<StoredSession[]> {
    return this.call(() => this.journal.listSessions(limit, before));
  }

  async deleteSessions(sessionId: string): Promise<string[]> {
    return this.call(() => this.journal.deleteSessions(sessionId));
  }

  async unfinishedSessions(): Promise<string[]> {
    return this.call(() => this.journal.unfinishedSessions());
  }

  async schemaVersion(): Promise<number> {
    return this.call(() =>
      this.journal.withDatabase((db) => (db.prepare('SELECT MAX(version) AS v FROM schema_migrations').get() as { v: number | null }).v ?? 0),
    );
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.journal.close();
  }

  /** Run a synchronous journal call; anything it throws becomes a JournalError. */
  private call<T>(fn: () => T): T {
    if (this.closed) throw new JournalError('journal store is closed');
    try {
      return fn();
    } catch (err) {
      if (err instanceof JournalError) throw err;
      throw new JournalError(`journal read failed: ${(err as Error).message}`, err);
    }
  }

  /** A conflict when the stored session is not what the write assumed; else the error as it was. */
  private classify(write: BatchWrite, err: unknown): unknown {
    let stored: StoredSession | null;
    try {
      stored = this.journal.loadSession(write.sessionId);
    } catch {
      return err;
    }
    const message = (err as Error).message;
    if (write.createdAt !== undefined && stored) {
      return new JournalConflictError(write.sessionId, write.head, `session ${write.sessionId} already exists`, err);
    }
    if (write.createdAt !== undefined && !stored && write.head !== 0) {
      return new JournalConflictError(write.sessionId, write.head, `session ${write.sessionId}: a first write has head 0, not ${write.head}`, err);
    }
    if (write.createdAt === undefined && !stored) {
      return new JournalConflictError(write.sessionId, write.head, `session ${write.sessionId} does not exist`, err);
    }
    if (stored && stored.headSequence !== write.head) {
      return new JournalConflictError(
        write.sessionId,
        write.head,
        `session ${write.sessionId}: head ${write.head} is not the journal's head (${stored.headSequence})`,
        err,
      );
    }
    return err instanceof JournalError ? err : new JournalError(message, err);
  }
}
