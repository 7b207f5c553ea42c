/**
 * The Journal: one SQLite database (WAL) holding every session's batches, checkpoint,
 * model transcript and admitted submission ids. A batch and the checkpoint as it stands
 * after it are written in one transaction, so the journal never holds events without the
 * state they produced, or the reverse.
 */
import Database from 'better-sqlite3';
import { chmodSync, existsSync } from 'node:fs';
import { JournalError } from '../errors.js';
import { WalCheckpointer, type CheckpointStatus } from './checkpointer.js';
import { migrate } from './migrations.js';
import { eraseSessions, prepareErasure } from './erase.js';
import { encodeBatchFrame, type Event } from '../../protocol/index.js';

/** One committed journal batch, as delivered to subscribers and read back for replay. */
export interface CommittedBatch {
  session_id: string;
  sequence: number;
  committed_at: number;
  events: Event[];
  /** The `batch` server frame, serialized once; send it as-is to every client. */
  frame: string;
}

/**
 * What one commit writes for one session, in one transaction: any number of batches
 * (sequences head+1, head+2, …; none for a checkpoint-only change) and the checkpoint as
 * it stands after them.
 */
export interface BatchWrite {
  sessionId: string;
  /** The head sequence before this write; the update refuses anything else. */
  head: number;
  /** Each batch's events as a JSON array (serialized once, by the recorder). */
  batches: string[];
  /** The checkpoint as it stands after these events, serialized. */
  checkpoint: string;
  /** Set on a session's very first write: the session row is inserted with it. */
  createdAt?: number;
  unfinished: boolean;
  /** Transcript items appended by this batch, starting at index `transcriptFrom`. */
  transcriptFrom: number;
  transcript: string[];
  /** Message submission ids admitted by this batch. */
  admissions: string[];
  /**
   * Messages that joined the queue in this write (admitted by it): each one's entry (JSON
   * of its text and overrides) is stored once, on its admission row — never in the
   * checkpoint, which lists only the queue's ids (docs/architecture.md).
   */
  queued?: QueuedEntry[];
  /** Submission ids that left the queue in this write (their turn started): their entries are cleared. */
  dequeued?: string[];
}

/** A queued message's stored entry: its submission id and the JSON of `{text, overrides?}`. */
export interface QueuedEntry {
  submission_id: string;
  entry: string;
}

export interface StoredSession {
  sessionId: string;
  createdAt: number;
  headSequence: number;
  checkpoint: string;
  /** `loadSession` only, when there are some: the entries of the messages waiting in the session's queue. */
  queued?: QueuedEntry[];
}

export interface JournalOptions {
  synchronous?: 'NORMAL' | 'FULL';
  readonly?: boolean;
  /** Told when WAL checkpoints fall behind the commits (the WAL keeps growing). */
  onCheckpointBehind?: (status: CheckpointStatus) => void;
}

interface BatchRow {
  sequence: number;
  committed_at: number;
  events: string;
}

/** Checkpoint the WAL after this long without commits… */
const CHECKPOINT_IDLE_MS = 250;
/**
 * …or after this many commits in a row, or this many characters of rows written (one tick
 * of many sessions is one commit: the bytes bound the WAL). In the worker: it never blocks
 * a commit, but it does take a core, so not more often than needed.
 */
const CHECKPOINT_EVERY_COMMITS = 4000;
const CHECKPOINT_EVERY_CHARS = 32 * 1024 * 1024;

/** What became of one session's write in a commit of many. */
export type WriteOutcome = { ok: true; batches: CommittedBatch[] } | { ok: false; error: JournalError };

/** A value, or a promise of it: SQLite answers in-process, PostgreSQL over the network. */
export type MaybePromise<T> = T | Promise<T>;

/**
 * The one commit path into a journal: the seam the shared writer (`writer.ts`) and
 * another backend implement. `commitMany` commits many sessions' writes together (one
 * transaction where the backend can) and answers one outcome per write, in order. A
 * failing write never fails the others: exactly its session is refused, the rest are
 * committed. It may answer a Promise (a network database); SQLite answers synchronously.
 */
export interface JournalWriter {
  commitMany(writes: readonly BatchWrite[]): MaybePromise<WriteOutcome[]>;
}

/**
 * Everything the session host reads and writes through: the SQLite `Journal` (answers at
 * once), or in cluster mode the PostgreSQL journal (`pg/journal.ts`, answers promises;
 * nothing ever waits for the network on the main thread). Callers always `await`.
 */
export interface SessionJournal extends JournalWriter {
  isAdmitted(sessionId: string, submissionId: string): MaybePromise<boolean>;
  loadSession(sessionId: string): MaybePromise<StoredSession | null>;
  loadTranscript(sessionId: string): MaybePromise<string[]>;
  unfinishedSessions(): MaybePromise<string[]>;
  listSessions(limit: number, before?: string): MaybePromise<StoredSession[]>;
  readAfter(sessionId: string, after: number, limit: number): MaybePromise<CommittedBatch[]>;
  readBefore(sessionId: string, before: number, limit: number): MaybePromise<CommittedBatch[]>;
  /**
   * Delete the session and its subagent sessions from every table, in one transaction, and
   * their text from the database files (docs/sessions.md#deleting-sessions). Answers the
   * deleted ids, the session first; empty when there is no such session.
   */
  deleteSessions(sessionId: string): MaybePromise<string[]>;
  /** The WAL checkpoints' status (/healthz); null where there is none. */
  checkpointStatus(): CheckpointStatus | null;
  close(): MaybePromise<void>;
}

export class Journal implements SessionJournal {
  private readonly db: Database.Database;
  private checkpointTimer: NodeJS.Timeout | null = null;
  private commitsSinceCheckpoint = 0;
  private charsSinceCheckpoint = 0;
  /** Runs the WAL checkpoints in a worker thread (null: an in-memory or read-only journal). */
  private readonly checkpointer: WalCheckpointer | null;
  private readonly stmts;
  private readonly commitTx: (write: BatchWrite, committedAt: number) => void;
  private readonly commitManyTx: (writes: readonly BatchWrite[], committedAt: number) => Array<JournalError | null>;

  constructor(path: string, options: JournalOptions = {}) {
    try {
      const created = !options.readonly && path !== ':memory:' && !existsSync(path);
      this.db = new Database(path, { readonly: options.readonly ?? false });
      // The journal holds conversations: readable by the owner only.
      if (created) chmodSync(path, 0o600);
      if (!options.readonly) {
        // Before the first table exists: auto_vacuum cannot change later without a VACUUM.
        prepareErasure(this.db, created);
        this.db.pragma('journal_mode = WAL');
        this.db.pragma(`synchronous = ${options.synchronous ?? 'NORMAL'}`);
        this.db.pragma('busy_timeout = 5000');
        // WAL checkpoints run when the journal is idle (see afterCommit), not inside a commit.
        this.db.pragma('wal_autocheckpoint = 0');
        // A WAL restarted after a checkpoint is cut back to this size.
        this.db.pragma(`journal_size_limit = ${64 * 1024 * 1024}`);
        migrate(this.db);
      }
    } catch (err) {
      throw new JournalError(`cannot open journal ${path}: ${(err as Error).message}`, err);
    }
    this.checkpointer =
      options.readonly || path === ':memory:'
        ? null
        : new WalCheckpointer(path, { ...(options.onCheckpointBehind && { onBehind: options.onCheckpointBehind }) });
    const db = this.db;
    this.stmts = {
      insertSession: db.prepare(
        'INSERT INTO sessions (session_id, created_at, updated_at, head_sequence, unfinished, checkpoint) VALUES (?, ?, ?, 0, 0, ?)',
      ),
      insertBatch: db.prepare('INSERT INTO batches (session_id, sequence, committed_at, events) VALUES (?, ?, ?, ?)'),
      updateSession: db.prepare(
        'UPDATE sessions SET head_sequence = ?, updated_at = ?, unfinished = ?, checkpoint = ? WHERE session_id = ? AND head_sequence = ?',
      ),
      insertTranscript: db.prepare('INSERT INTO transcript (session_id, idx, item) VALUES (?, ?, ?)'),
      insertAdmission: db.prepare('INSERT INTO admissions (session_id, submission_id, sequence) VALUES (?, ?, ?)'),
      setQueued: db.prepare('UPDATE admissions SET queued = ? WHERE session_id = ? AND submission_id = ?'),
      clearQueued: db.prepare('UPDATE admissions SET queued = NULL WHERE session_id = ? AND submission_id = ?'),
      loadQueued: db.prepare('SELECT submission_id, queued AS entry FROM admissions WHERE session_id = ? AND queued IS NOT NULL'),
      isAdmitted: db.prepare('SELECT 1 FROM admissions WHERE session_id = ? AND submission_id = ?').pluck(),
      loadSession: db.prepare('SELECT session_id, created_at, head_sequence, checkpoint FROM sessions WHERE session_id = ?'),
      loadTranscript: db.prepare('SELECT item FROM transcript WHERE session_id = ? ORDER BY idx').pluck(),
      readAfter: db.prepare(
        'SELECT sequence, committed_at, events FROM batches WHERE session_id = ? AND sequence > ? ORDER BY sequence LIMIT ?',
      ),
      readBefore: db.prepare(
        'SELECT sequence, committed_at, events FROM batches WHERE session_id = ? AND sequence < ? ORDER BY sequence DESC LIMIT ?',
      ),
      unfinished: db.prepare('SELECT session_id FROM sessions WHERE unfinished = 1').pluck(),
      listFirst: db.prepare(
        'SELECT session_id, created_at, head_sequence, checkpoint FROM sessions ORDER BY rowid DESC LIMIT ?',
      ),
      listBefore: db.prepare(
        'SELECT session_id, created_at, head_sequence, checkpoint FROM sessions WHERE rowid < (SELECT rowid FROM sessions WHERE session_id = ?) ORDER BY rowid DESC LIMIT ?',
      ),
    };
    this.commitTx = db.transaction((w: BatchWrite, committedAt: number) => {
      // Nested in commitManyTx this runs in a SAVEPOINT: a failure undoes this write only.
      if (w.createdAt !== undefined) this.stmts.insertSession.run(w.sessionId, w.createdAt, w.createdAt, w.checkpoint);
      w.batches.forEach((events, i) => this.stmts.insertBatch.run(w.sessionId, w.head + 1 + i, committedAt, events));
      const head = w.head + w.batches.length;
      const changed = this.stmts.updateSession.run(head, committedAt, w.unfinished ? 1 : 0, w.checkpoint, w.sessionId, w.head).changes;
      if (changed !== 1) throw new JournalError(`session ${w.sessionId}: head ${w.head} is not the journal's head`);
      for (let i = 0; i < w.transcript.length; i++) {
        this.stmts.insertTranscript.run(w.sessionId, w.transcriptFrom + i, w.transcript[i]);
      }
      for (const id of w.admissions) this.stmts.insertAdmission.run(w.sessionId, id, head);
      for (const q of w.queued ?? []) {
        if (this.stmts.setQueued.run(q.entry, w.sessionId, q.submission_id).changes !== 1) {
          throw new JournalError(`session ${w.sessionId}: queued message ${q.submission_id} has no admission`);
        }
      }
      for (const id of w.dequeued ?? []) this.stmts.clearQueued.run(w.sessionId, id);
    });
    this.commitManyTx = db.transaction((writes: readonly BatchWrite[], committedAt: number) =>
      writes.map((w) => {
        try {
          this.commitTx(w, committedAt);
          return null;
        } catch (err) {
          // The error ended the whole transaction (SQLITE_FULL, I/O): the caller retries each alone.
          if (!db.inTransaction) throw err;
          return err instanceof JournalError ? err : new JournalError(`journal write failed: ${(err as Error).message}`, err);
        }
      }),
    );
  }

  /**
   * Commit batches and the checkpoint after them atomically (no batches: a checkpoint
   * change alone, e.g. "this tool call has started"). Throws JournalError (nothing
   * written) on any failure: disk full, read-only database, I/O error, head conflict.
   */
  commit(write: BatchWrite): CommittedBatch[] {
    const committedAt = Date.now();
    this.guard(() => this.commitTx(write, committedAt));
    this.afterCommit(writtenChars(write));
    return committedBatches(write, committedAt);
  }

  private tryCommit(write: BatchWrite): WriteOutcome {
    try {
      return { ok: true, batches: this.commit(write) };
    } catch (err) {
      return { ok: false, error: err as JournalError };
    }
  }

  /**
   * Commit many sessions' writes in one transaction, each in its own savepoint: a write
   * that fails (head conflict, a constraint, a trigger) is rolled back alone and the rest
   * commit. When the transaction as a whole fails (disk full, I/O error, COMMIT refused),
   * each write is retried in a transaction of its own, so exactly the failing ones fail.
   */
  commitMany(writes: readonly BatchWrite[]): WriteOutcome[] {
    if (writes.length === 1) return [this.tryCommit(writes[0]!)];
    const committedAt = Date.now();
    let failures: Array<JournalError | null>;
    try {
      failures = this.commitManyTx(writes, committedAt);
    } catch {
      return writes.map((w) => this.tryCommit(w));
    }
    let chars = 0;
    for (const w of writes) chars += writtenChars(w);
    this.afterCommit(chars);
    return writes.map((w, i) => {
      const error = failures[i];
      return error ? { ok: false, error } : { ok: true, batches: committedBatches(w, committedAt) };
    });
  }

  deleteSessions(sessionId: string): string[] {
    return this.guard(() => eraseSessions(this.db, sessionId));
  }

  /** Run `fn` on the underlying database (tests and maintenance tools: pragmas, fault injection). */
  withDatabase<T>(fn: (db: Database.Database) => T): T {
    return fn(this.db);
  }

  isAdmitted(sessionId: string, submissionId: string): boolean {
    return this.stmts.isAdmitted.get(sessionId, submissionId) !== undefined;
  }

  loadSession(sessionId: string): StoredSession | null {
    const row = this.stmts.loadSession.get(sessionId) as
      | { session_id: string; created_at: number; head_sequence: number; checkpoint: string }
      | undefined;
    if (!row) return null;
    const queued = this.stmts.loadQueued.all(sessionId) as QueuedEntry[];
    return queued.length > 0 ? { ...toStored(row), queued } : toStored(row);
  }

  loadTranscript(sessionId: string): string[] {
    return this.stmts.loadTranscript.all(sessionId) as string[];
  }

  /** Ids of sessions whose checkpoint says they have unfinished work (turn or queue). */
  unfinishedSessions(): string[] {
    return this.stmts.unfinished.all() as string[];
  }

  /** Sessions newest first; `before` continues after that session id. */
  listSessions(limit: number, before?: string): StoredSession[] {
    const rows = (before ? this.stmts.listBefore.all(before, limit) : this.stmts.listFirst.all(limit)) as Array<{
      session_id: string;
      created_at: number;
      head_sequence: number;
      checkpoint: string;
    }>;
    return rows.map(toStored);
  }

  /** Batches with sequence > after, ascending, at most limit. */
  readAfter(sessionId: string, after: number, limit: number): CommittedBatch[] {
    const rows = this.stmts.readAfter.all(sessionId, after, limit) as BatchRow[];
    return rows.map((r) => toBatch(sessionId, r));
  }

  /** The last `limit` batches with sequence < before, ascending. */
  readBefore(sessionId: string, before: number, limit: number): CommittedBatch[] {
    const rows = this.stmts.readBefore.all(sessionId, before, limit) as BatchRow[];
    return rows.reverse().map((r) => toBatch(sessionId, r));
  }

  /** The WAL checkpoints' status (/healthz); null for an in-memory or read-only journal. */
  checkpointStatus(): CheckpointStatus | null {
    return this.checkpointer?.status() ?? null;
  }

  /** Resolves once no WAL checkpoint is running or asked for (tests, maintenance). */
  checkpointIdle(): Promise<void> {
    return this.checkpointer?.idle() ?? Promise.resolve();
  }

  close(): void {
    if (this.checkpointTimer) clearTimeout(this.checkpointTimer);
    this.checkpointer?.close();
    if (!this.db.open) return;
    try {
      if (!this.db.readonly) this.db.pragma('wal_checkpoint(TRUNCATE)');
    } catch {
      /* the next open checkpoints */
    }
    this.db.close();
  }

  /**
   * Checkpoint the WAL into the database (in the checkpointer's worker) once the journal
   * has been quiet for a moment, or at once when many commits have piled up without a
   * pause (bounds the WAL's size).
   */
  private afterCommit(chars: number): void {
    this.charsSinceCheckpoint += chars;
    if (++this.commitsSinceCheckpoint >= CHECKPOINT_EVERY_COMMITS || this.charsSinceCheckpoint >= CHECKPOINT_EVERY_CHARS) {
      this.checkpoint();
      return;
    }
    if (this.checkpointTimer) this.checkpointTimer.refresh();
    else {
      this.checkpointTimer = setTimeout(() => this.checkpoint(), CHECKPOINT_IDLE_MS);
      this.checkpointTimer.unref();
    }
  }

  private checkpoint(): void {
    if (this.checkpointTimer) clearTimeout(this.checkpointTimer);
    this.checkpointTimer = null;
    this.commitsSinceCheckpoint = 0;
    this.charsSinceCheckpoint = 0;
    // Busy or I/O trouble is kept in the status; the next request tries again.
    if (this.db.open) this.checkpointer?.request();
  }

  private guard<T>(fn: () => T): T {
    try {
      return fn();
    } catch (err) {
      if (err instanceof JournalError) throw err;
      throw new JournalError(`journal write failed: ${(err as Error).message}`, err);
    }
  }
}

/** About what a write puts into the WAL: its rows' text. */
function writtenChars(write: BatchWrite): number {
  let n = write.checkpoint.length;
  for (const b of write.batches) n += b.length;
  for (const t of write.transcript) n += t.length;
  return n;
}

function committedBatches(write: BatchWrite, committedAt: number): CommittedBatch[] {
  return write.batches.map((events, i) =>
    toBatch(write.sessionId, { sequence: write.head + 1 + i, committed_at: committedAt, events }),
  );
}

function toStored(row: { session_id: string; created_at: number; head_sequence: number; checkpoint: string }): StoredSession {
  return { sessionId: row.session_id, createdAt: row.created_at, headSequence: row.head_sequence, checkpoint: row.checkpoint };
}

/** A batch whose events are parsed only if someone asks (the server only sends `frame`). */
function toBatch(sessionId: string, row: BatchRow): CommittedBatch {
  let events: Event[] | undefined;
  return {
    session_id: sessionId,
    sequence: row.sequence,
    committed_at: row.committed_at,
    get events(): Event[] {
      return (events ??= JSON.parse(row.events) as Event[]);
    },
    frame: encodeBatchFrame(sessionId, row.sequence, row.committed_at, row.events),
  };
}
