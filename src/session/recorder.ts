/**
 * The Recorder: a session's one path into the journal. Changes (events, transcript items,
 * the state after them, an admission) are collected into the next commit and written
 * together with the session checkpoint — at once when the actor finished a submission,
 * or within `groupCommitMs` for frequent events such as deltas (group commit). One commit
 * may hold several batches: a batch is never larger than a frame allows (runtime.md §9).
 * Subscribers see a batch only after it commits.
 */
import { encodeEventList } from '../../protocol/index.js';
import type { BatchWrite, CommittedBatch, JournalWriter, StoredSession } from '../journal/journal.js';
import { MAX_BATCH_EVENTS_BYTES } from './event_fit.js';
import { isUnfinished, type SessionState } from './state.js';
import type { Transcript } from './transcript.js';
import type { Change, PendingAdmission } from './tx.js';

/** A batch with this many events is committed without waiting for the group-commit timer. */
const MAX_BATCH_EVENTS = 512;
/** …or with this many characters of events (latency, not the frame bound). */
const GROUP_COMMIT_BYTES = 256 * 1024;

export interface RecorderHooks {
  /** After a successful commit, once per batch (subscribers are notified from here). */
  committed(batch: CommittedBatch): void;
  /** A commit failed; nothing of it is in the journal. */
  failed(error: Error, committed: SessionState): void;
}

export interface RecorderOptions {
  journal: JournalWriter;
  state: SessionState;
  head: number;
  transcript: Transcript;
  groupCommitMs: number;
  hooks: RecorderHooks;
  /** The inbox's last ingress sequence, stamped into every checkpoint. */
  lastIngress: () => number;
  /** A brand-new session: its first commit inserts the session row. */
  createdAt?: number;
}

export class Recorder {
  /** Pending events, each serialized (JSON of the envelope), split into frame-sized batches. */
  private batches: string[][] = [];
  private batchBytes = 0;
  private pendingBytes = 0;
  private pendingEvents = 0;
  private admissions: PendingAdmission[] = [];
  private latest: SessionState;
  private committedState: SessionState;
  private timer: NodeJS.Timeout | null = null;
  private head: number;
  private createdAt: number | undefined;

  constructor(private readonly options: RecorderOptions) {
    this.latest = options.state;
    this.committedState = options.state;
    this.head = options.head;
    this.createdAt = options.createdAt;
  }

  get headSequence(): number {
    return this.head;
  }

  get hasPending(): boolean {
    return this.pendingEvents > 0;
  }

  /** The state as last committed (what a rollback returns to). */
  get committed(): SessionState {
    return this.committedState;
  }

  /**
   * Add a change to the next commit. Its events may span batches (a batch stays within
   * the frame bound); they and the state after them are committed in one transaction.
   */
  record(change: Change): void {
    for (const item of change.items) this.options.transcript.append(item);
    for (const entry of change.entries) {
      // UTF-8 bytes: small entries are estimated (at most 3 bytes a character), large ones counted.
      const bytes = entry.length < 1024 ? entry.length * 3 : Buffer.byteLength(entry);
      const open = this.batches[this.batches.length - 1];
      // Each entry fits a batch alone (event_fit); "+1" counts the comma.
      if (!open || this.batchBytes + bytes + 1 > MAX_BATCH_EVENTS_BYTES) {
        this.batches.push([entry]);
        this.batchBytes = bytes;
      } else {
        open.push(entry);
        this.batchBytes += bytes + 1;
      }
      this.pendingBytes += entry.length;
      this.pendingEvents++;
    }
    this.latest = change.state;
    if (change.admission) this.admissions.push(change.admission);
    if (this.pendingEvents >= MAX_BATCH_EVENTS || this.pendingBytes >= GROUP_COMMIT_BYTES) this.flush();
    else if (!this.timer && this.pendingEvents > 0) {
      this.timer = setTimeout(() => this.flush(), this.options.groupCommitMs);
    }
  }

  /** Commit everything pending now. Returns false when the commit failed. */
  flush(): boolean {
    if (this.timer) {
      clearTimeout(this.timer);
      this.timer = null;
    }
    const { transcript, journal, hooks } = this.options;
    if (this.pendingEvents === 0 && this.latest === this.committedState && this.createdAt === undefined) return true;
    const batches = this.batches.map((b) => encodeEventList(b));
    const admissions = this.admissions;
    this.clearPending();
    const state = { ...this.latest, transcript_length: transcript.length, last_ingress_seq: this.options.lastIngress() };
    let committed: CommittedBatch[];
    try {
      const write: BatchWrite = {
        sessionId: state.session_id,
        head: this.head,
        batches,
        checkpoint: JSON.stringify(state),
        unfinished: isUnfinished(state),
        transcriptFrom: transcript.committedLength,
        transcript: transcript.uncommitted(),
        admissions: admissions.map((a) => a.submission_id),
        ...(this.createdAt !== undefined && { createdAt: this.createdAt }),
      };
      committed = journal.commit(write);
    } catch (err) {
      this.drop(admissions, (err as Error).message);
      hooks.failed(err as Error, this.committedState);
      return false;
    }
    this.createdAt = undefined;
    transcript.markCommitted(state.transcript_length);
    this.committedState = this.latest;
    for (const a of admissions) {
      const cb = a.onAdmitted;
      if (cb) queueMicrotask(() => cb('accepted'));
    }
    for (const batch of committed) {
      this.head = batch.sequence;
      hooks.committed(batch);
    }
    return true;
  }

  /** Drop what is pending without committing (after a rollback); admissions are rejected. */
  discardPending(reason = 'the session rolled back after a journal failure'): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    const admissions = this.admissions;
    this.clearPending();
    this.drop(admissions, reason);
  }

  /** Drop the timer (the session is stopping; flush first if wanted). */
  dispose(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
  }

  private clearPending(): void {
    this.batches = [];
    this.batchBytes = 0;
    this.pendingBytes = 0;
    this.pendingEvents = 0;
    this.admissions = [];
  }

  /** Forget an uncommitted change: its transcript items, its state, its admissions. */
  private drop(admissions: PendingAdmission[], reason: string): void {
    this.options.transcript.rollback();
    this.latest = this.committedState;
    for (const a of admissions) {
      const cb = a.onRejected;
      if (cb) queueMicrotask(() => cb(`message ${a.submission_id} was not accepted: ${reason}`));
    }
  }
}

/**
 * Record, for a session that cannot be hydrated (its checkpoint is unreadable), events
 * that explain it, keeping the stored checkpoint and clearing its unfinished flag. The
 * same single write path as every other commit.
 */
export function recordUnrecoverable(journal: JournalWriter, stored: StoredSession, entries: string[]): void {
  journal.commit({
    sessionId: stored.sessionId,
    head: stored.headSequence,
    batches: [`[${entries.join(',')}]`],
    checkpoint: stored.checkpoint,
    unfinished: false,
    transcriptFrom: 0,
    transcript: [],
    admissions: [],
  });
}
