/**
 * The Recorder: the session's path into the Journal. Events are collected into the next
 * batch and committed together with the session checkpoint as it stands after them —
 * at once when the actor finished a submission, or within `groupCommitMs` for frequent
 * events such as deltas (group commit). Subscribers see a batch only after it commits.
 */
import { encodeEventList } from '../../protocol/index.js';
import type { Journal } from '../journal/journal.js';
import type { CommittedBatch } from './api.js';
import { isUnfinished, type SessionState } from './state.js';
import type { Transcript } from './transcript.js';

/** A batch with this many events is committed without waiting for the group-commit timer. */
const MAX_BATCH_EVENTS = 512;
/** …or with this many bytes of events; it stays well below the 4 MiB frame limit. */
const MAX_BATCH_BYTES = 256 * 1024;

export interface PendingAdmission {
  submission_id: string;
  onAdmitted?: ((outcome: 'accepted') => void) | undefined;
  onRejected?: ((message: string) => void) | undefined;
}

export interface RecorderHooks {
  /** After a successful commit (subscribers are notified from here). */
  committed(batch: CommittedBatch): void;
  /** A commit failed; nothing of the batch is in the journal. */
  failed(error: Error, committed: SessionState): void;
}

export class Recorder {
  /** The pending events, each already serialized (JSON of the envelope). */
  private json: string[] = [];
  private bytes = 0;
  private admissions: PendingAdmission[] = [];
  private latest: SessionState;
  private committedState: SessionState;
  private timer: NodeJS.Timeout | null = null;

  constructor(
    private readonly journal: Journal,
    state: SessionState,
    private head: number,
    private readonly transcript: Transcript,
    private readonly groupCommitMs: number,
    private readonly hooks: RecorderHooks,
    /** The inbox's last ingress sequence, stamped into every checkpoint. */
    private readonly lastIngress: () => number = () => state.last_ingress_seq,
  ) {
    this.latest = state;
    this.committedState = state;
  }

  get headSequence(): number {
    return this.head;
  }

  get hasPending(): boolean {
    return this.json.length > 0;
  }

  /**
   * Add events to the next batch; `state` is the session state after them. The events of
   * one call are never split across batches (they and `state` belong together); a batch
   * that would grow past the size bounds is committed first.
   */
  record(entries: string[], state: SessionState, admission?: PendingAdmission): void {
    let size = 0;
    for (const e of entries) size += e.length;
    if (this.json.length > 0 && this.bytes + size > MAX_BATCH_BYTES) this.flush();
    for (const e of entries) this.json.push(e);
    this.bytes += size;
    this.latest = state;
    if (admission) this.admissions.push(admission);
    if (this.json.length >= MAX_BATCH_EVENTS || this.bytes >= MAX_BATCH_BYTES) this.flush();
    else if (!this.timer && this.json.length > 0) {
      this.timer = setTimeout(() => this.flush(), this.groupCommitMs);
    }
  }

  /** Commit everything pending now. Returns false when the commit failed. */
  flush(): boolean {
    if (this.timer) {
      clearTimeout(this.timer);
      this.timer = null;
    }
    if (this.json.length === 0 && this.latest === this.committedState) return true;
    const count = this.json.length;
    const eventsJson = encodeEventList(this.json);
    const admissions = this.admissions;
    this.json = [];
    this.bytes = 0;
    this.admissions = [];
    const state = { ...this.latest, transcript_length: this.transcript.length, last_ingress_seq: this.lastIngress() };
    let batch: CommittedBatch | null = null;
    try {
      const write = {
        sessionId: state.session_id,
        sequence: count > 0 ? this.head + 1 : this.head,
        eventsJson,
        checkpoint: JSON.stringify(state),
        unfinished: isUnfinished(state),
        transcriptFrom: this.transcript.committedLength,
        transcript: this.transcript.uncommitted(),
        admissions: admissions.map((a) => a.submission_id),
      };
      if (count > 0) batch = this.journal.commit(write);
      else this.journal.saveCheckpoint(write);
    } catch (err) {
      this.drop(admissions, (err as Error).message);
      this.hooks.failed(err as Error, this.committedState);
      return false;
    }
    this.transcript.markCommitted(state.transcript_length);
    this.committedState = this.latest;
    for (const a of admissions) {
      const cb = a.onAdmitted;
      if (cb) queueMicrotask(() => cb('accepted'));
    }
    if (batch) {
      this.head = batch.sequence;
      this.hooks.committed(batch);
    }
    return true;
  }

  /** Drop what is pending without committing (after a rollback); admissions are rejected. */
  discardPending(reason = 'the session rolled back after a journal failure'): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    const admissions = this.admissions;
    this.json = [];
    this.bytes = 0;
    this.admissions = [];
    this.drop(admissions, reason);
  }

  /** Forget an uncommitted batch: its transcript items, its state, its admissions. */
  private drop(admissions: PendingAdmission[], reason: string): void {
    this.transcript.rollback();
    this.latest = this.committedState;
    for (const a of admissions) {
      const cb = a.onRejected;
      if (cb) queueMicrotask(() => cb(`message ${a.submission_id} was not accepted: ${reason}`));
    }
  }

  /** Drop the timer (the session is stopping; flush first if wanted). */
  dispose(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
  }
}
