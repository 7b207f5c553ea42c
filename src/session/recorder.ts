/**
 * The Recorder: the session's path into the Journal. Events are collected into the next
 * batch and committed together with the session checkpoint as it stands after them —
 * at once when the actor finished a submission, or within `groupCommitMs` for frequent
 * events such as deltas (group commit). Subscribers see a batch only after it commits.
 */
import type { Event } from '../../protocol/index.js';
import type { Journal } from '../journal/journal.js';
import type { CommittedBatch } from './api.js';
import { isUnfinished, type SessionState } from './state.js';
import type { Transcript } from './transcript.js';

/** A batch larger than this is committed without waiting for the group-commit timer. */
const MAX_BATCH_EVENTS = 512;

export interface PendingAdmission {
  submission_id: string;
  onAdmitted?: ((outcome: 'accepted') => void) | undefined;
  onRejected?: ((message: string) => void) | undefined;
}

export interface RecorderHooks {
  /** After a successful commit (subscribers are notified from here). */
  committed(batch: CommittedBatch, state: SessionState): void;
  /** A commit failed; nothing of the batch is in the journal. */
  failed(error: Error, committed: SessionState): void;
}

export class Recorder {
  private events: Event[] = [];
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

  /** The state as of the last commit (what a rollback restores). */
  get lastCommitted(): SessionState {
    return this.committedState;
  }

  get hasPending(): boolean {
    return this.events.length > 0;
  }

  /** Add events to the next batch; `state` is the session state after them. */
  record(events: Event[], state: SessionState, admission?: PendingAdmission): void {
    for (const e of events) this.events.push(e);
    this.latest = state;
    if (admission) this.admissions.push(admission);
    if (this.events.length >= MAX_BATCH_EVENTS) this.flush();
    else if (!this.timer && this.events.length > 0) {
      this.timer = setTimeout(() => this.flush(), this.groupCommitMs);
    }
  }

  /** Commit everything pending now. Returns false when the commit failed. */
  flush(): boolean {
    if (this.timer) {
      clearTimeout(this.timer);
      this.timer = null;
    }
    if (this.events.length === 0 && this.latest === this.committedState) return true;
    const events = this.events;
    const admissions = this.admissions;
    this.events = [];
    this.admissions = [];
    const state = { ...this.latest, transcript_length: this.transcript.length, last_ingress_seq: this.lastIngress() };
    let batch: CommittedBatch | null = null;
    try {
      const write = {
        sessionId: state.session_id,
        sequence: events.length > 0 ? this.head + 1 : this.head,
        events,
        checkpoint: JSON.stringify(state),
        unfinished: isUnfinished(state),
        transcriptFrom: this.transcript.committedLength,
        transcript: this.transcript.uncommitted(),
        admissions: admissions.map((a) => a.submission_id),
      };
      if (events.length > 0) batch = this.journal.commit(write);
      else this.journal.saveCheckpoint(write);
    } catch (err) {
      this.transcript.rollback();
      this.latest = this.committedState;
      for (const a of admissions) {
        const cb = a.onRejected;
        if (cb) queueMicrotask(() => cb(`message ${a.submission_id} was not accepted: ${(err as Error).message}`));
      }
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
      this.hooks.committed(batch, state);
    }
    return true;
  }

  /** Drop what is pending without committing (after a rollback); admissions are rejected. */
  discardPending(reason = 'the session rolled back after a journal failure'): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    for (const a of this.admissions) {
      const cb = a.onRejected;
      if (cb) queueMicrotask(() => cb(`message ${a.submission_id} was not accepted: ${reason}`));
    }
    this.events = [];
    this.admissions = [];
    this.transcript.rollback();
    this.latest = this.committedState;
  }

  /** Drop the timer (the session is stopping; flush first if wanted). */
  dispose(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
  }
}
