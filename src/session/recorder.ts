/**
 * The Recorder: a session's one path into the journal. Changes (events, transcript items,
 * the state after them, an admission) are collected into the next commit and written
 * together with the session checkpoint, always through the node's shared writer (one
 * transaction per tick for every session): in its next urgent tick when the session
 * awaits the commit (`flush`: the pump after a submission, a tool's start, creation,
 * hydration, stop), within `groupCommitMs` for frequent events such as deltas. One commit
 * may hold several batches: a batch is never larger than a frame allows
 * (docs/configuration.md). Subscribers see a batch only after it commits. A session has
 * at most one write in flight; what it records meanwhile goes into the next one.
 */
import { encodeEventList } from '../../protocol/index.js';
import type { BatchWrite, CommittedBatch, StoredSession, WriteOutcome } from '../journal/journal.js';
import type { SharedWriter, WriteSource } from '../journal/writer.js';
import { MAX_BATCH_EVENTS_BYTES } from './event_fit.js';
import { isUnfinished, type QueuedMessage, type SessionState } from './state.js';
import type { Transcript } from './transcript.js';
import type { Change, PendingAdmission } from './tx.js';

/** A batch with this many events is committed without waiting for the group-commit timer. */
const MAX_BATCH_EVENTS = 512;
/** …or with this many characters of events (latency, not the frame bound). */
const GROUP_COMMIT_BYTES = 256 * 1024;
/** An event below this size counts toward closing a batch at GROUP_COMMIT_BYTES. */
const SMALL_EVENT_BYTES = 64 * 1024;

export interface RecorderHooks {
  /** After a successful commit, once per batch (subscribers are notified from here). */
  committed(batch: CommittedBatch): void;
  /** A commit failed; nothing of it is in the journal. */
  failed(error: Error, committed: SessionState): void;
}

export interface RecorderOptions {
  /** Every commit goes into this writer's tick (one transaction for all sessions). */
  writer: SharedWriter;
  state: SessionState;
  head: number;
  transcript: Transcript;
  /** Unused since every write goes through the writer (its tick is the group-commit delay). */
  groupCommitMs?: number;
  hooks: RecorderHooks;
  /** The inbox's last ingress sequence, stamped into every checkpoint. */
  lastIngress: () => number;
  /** A brand-new session: its first commit inserts the session row. */
  createdAt?: number;
}

/** The write taken for a commit and what it commits (settled after the commit). */
interface Taken {
  write: BatchWrite;
  state: SessionState;
  transcriptLength: number;
  admissions: PendingAdmission[];
  /** Whoever awaits this write (`flush`): told whether it committed. */
  waiters: Array<(ok: boolean) => void>;
}

const COMMITTED: Promise<boolean> = Promise.resolve(true);

export class Recorder implements WriteSource {
  /** Pending events, each serialized (JSON of the envelope), split into frame-sized batches. */
  private batches: string[][] = [];
  private batchBytes = 0;
  /** Bytes of the open batch's small events (the group-commit bound closes it). */
  private batchSmallBytes = 0;
  private pendingBytes = 0;
  private pendingEvents = 0;
  private admissions: PendingAdmission[] = [];
  private latest: SessionState;
  private committedState: SessionState;
  /** Whoever awaits the next write (pending, not yet taken). */
  private waiters: Array<(ok: boolean) => void> = [];
  private head: number;
  private createdAt: number | undefined;
  private taken: Taken | null = null;
  /**
   * The last checkpoint serialized, and what it was serialized from (deltas leave the state
   * as it was): kept while work is unfinished, dropped once a commit leaves the session idle.
   */
  private checkpointCache: { state: SessionState; transcriptLength: number; lastIngress: number; json: string } | null = null;

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
   * The change is consumed: its arrays are emptied once their contents are here. The
   * emitted effect that carried it may already be garbage in the old generation, which the
   * young generation's collections still treat as live; emptied, it no longer keeps a
   * change's worth of event strings alive through them (docs/performance.md, streaming).
   */
  record(change: Change): void {
    change.items.forEach((item, i) => this.options.transcript.append(item, change.itemsJson?.[i]));
    for (const entry of change.entries) {
      // UTF-8 bytes: small entries are estimated (at most 3 bytes a character), large ones counted.
      const bytes = entry.length < 1024 ? entry.length * 3 : Buffer.byteLength(entry);
      const open = this.batches[this.batches.length - 1];
      // Each entry fits a batch alone (event_fit); "+1" counts the comma. A batch is also
      // closed at the group-commit bounds, so a burst gathered while a commit is in flight
      // still reaches subscribers in batches of the same size as when it committed at once.
      // (Counted in small events only: large ones still share a batch up to the frame bound.)
      const full = this.batchSmallBytes >= GROUP_COMMIT_BYTES || (open?.length ?? 0) >= MAX_BATCH_EVENTS;
      if (!open || this.batchBytes + bytes + 1 > MAX_BATCH_EVENTS_BYTES || full) {
        this.batches.push([entry]);
        this.batchBytes = bytes;
        this.batchSmallBytes = 0;
      } else {
        open.push(entry);
        this.batchBytes += bytes + 1;
      }
      if (bytes < SMALL_EVENT_BYTES) this.batchSmallBytes += bytes + 1;
      this.pendingBytes += entry.length;
      this.pendingEvents++;
    }
    this.latest = change.state;
    if (change.admission) this.admissions.push(change.admission);
    change.entries.length = 0;
    change.items.length = 0;
    if (change.itemsJson) change.itemsJson.length = 0;
    if (this.pendingEvents >= MAX_BATCH_EVENTS || this.pendingBytes >= GROUP_COMMIT_BYTES) this.options.writer.schedule(this, true);
    else if (this.pendingEvents > 0) this.options.writer.schedule(this);
  }

  /** Something recorded is not yet taken for a write. */
  private get untaken(): boolean {
    if (this.pendingEvents > 0 || this.admissions.length > 0) return true;
    if (this.taken) return this.latest !== this.taken.state;
    return this.latest !== this.committedState || this.createdAt !== undefined;
  }

  /**
   * Commit everything recorded so far, in the writer's next urgent tick (after the write
   * in flight, if any); resolves true once it is committed, false when that commit failed
   * or was dropped. Nothing waits on the event loop: the caller awaits.
   */
  flush(): Promise<boolean> {
    if (this.untaken) {
      return new Promise((resolve) => {
        this.waiters.push(resolve);
        this.options.writer.schedule(this, true);
      });
    }
    const taken = this.taken;
    if (taken) return new Promise((resolve) => taken.waiters.push(resolve));
    return COMMITTED;
  }

  /**
   * Everything pending as one write (the shared writer's tick, or flush); null when there
   * is nothing to write. Until `settle`, the recorder holds it as taken: nothing else is
   * taken meanwhile.
   */
  take(): BatchWrite | null {
    if (this.taken) return null;
    if (this.pendingEvents === 0 && this.latest === this.committedState && this.createdAt === undefined) return null;
    const { transcript } = this.options;
    const batches = this.batches.map((b) => encodeEventList(b));
    const admissions = this.admissions;
    const waiters = this.waiters;
    this.waiters = [];
    this.clearPending();
    const write: BatchWrite = {
      sessionId: this.latest.session_id,
      head: this.head,
      batches,
      checkpoint: this.checkpointJson(this.latest, transcript.length),
      unfinished: isUnfinished(this.latest),
      transcriptFrom: transcript.committedLength,
      transcript: transcript.uncommitted(),
      admissions: admissions.map((a) => a.submission_id),
      ...queueChanges(this.committedState.queue, this.latest.queue),
      ...(this.createdAt !== undefined && { createdAt: this.createdAt }),
    };
    this.taken = { write, state: this.latest, transcriptLength: transcript.length, admissions, waiters };
    return write;
  }

  /** The outcome of the taken write: advance and notify subscribers, or roll back. */
  settle(outcome: WriteOutcome): void {
    const taken = this.taken;
    if (!taken) return;
    this.taken = null;
    const { transcript, hooks } = this.options;
    if (!outcome.ok) {
      this.drop(taken.admissions, outcome.error.message);
      hooks.failed(outcome.error, this.committedState);
      for (const w of taken.waiters) w(false);
      return;
    }
    this.createdAt = undefined;
    transcript.markCommitted(taken.transcriptLength);
    this.committedState = taken.state;
    // The cache serves a running turn's delta batches; an idle session need not hold its checkpoint's JSON.
    if (!taken.write.unfinished) this.checkpointCache = null;
    for (const a of taken.admissions) {
      const cb = a.onAdmitted;
      if (cb) queueMicrotask(() => cb('accepted'));
    }
    // The head moves before anyone hears of the batches (a subscriber may record and flush).
    const last = outcome.batches[outcome.batches.length - 1];
    if (last) this.head = last.sequence;
    for (const batch of outcome.batches) hooks.committed(batch);
    for (const w of taken.waiters) w(true);
  }

  /**
   * The checkpoint's JSON. A delta batch leaves the state object as it was: then the
   * string of the previous commit is reused instead of serializing the state again.
   */
  private checkpointJson(state: SessionState, transcriptLength: number): string {
    const lastIngress = this.options.lastIngress();
    const c = this.checkpointCache;
    if (c && c.state === state && c.transcriptLength === transcriptLength && c.lastIngress === lastIngress) return c.json;
    // The queue's texts are stored once, on their admission rows (queueChanges): the
    // checkpoint lists the queue's ids, so its size does not grow with their texts.
    const queue = state.queue.length === 0 ? state.queue : state.queue.map(queueRef);
    const json = JSON.stringify({ ...state, queue, transcript_length: transcriptLength, last_ingress_seq: lastIngress });
    this.checkpointCache = { state, transcriptLength, lastIngress, json };
    return json;
  }

  /** Drop what is pending without committing (after a rollback); admissions are rejected. */
  discardPending(reason = 'the session rolled back after a journal failure'): void {
    this.options.writer.cancel(this);
    const admissions = this.admissions;
    this.clearPending();
    this.drop(admissions, reason);
  }

  /** Leave the shared writer, dropping what was not taken (the session stopped itself). */
  dispose(): void {
    this.options.writer.cancel(this);
    this.clearPending();
  }

  private clearPending(): void {
    const waiters = this.waiters;
    this.waiters = [];
    for (const w of waiters) w(false);
    this.batches = [];
    this.batchBytes = 0;
    this.batchSmallBytes = 0;
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

/** A queued message as the checkpoint lists it: its id (the text is on its admission row). */
function queueRef(q: QueuedMessage): Pick<QueuedMessage, 'submission_id'> {
  return { submission_id: q.submission_id };
}

/** What a write stores and clears of the queue's entries: messages that joined it, and those that left it. */
function queueChanges(before: readonly QueuedMessage[], after: readonly QueuedMessage[]): Pick<BatchWrite, 'queued' | 'dequeued'> {
  if (before === after) return {};
  const old = new Set(before.map((q) => q.submission_id));
  const now = new Set(after.map((q) => q.submission_id));
  const queued = after
    .filter((q) => !old.has(q.submission_id))
    .map((q) => ({ submission_id: q.submission_id, entry: JSON.stringify({ text: q.text, ...(q.overrides && { overrides: q.overrides }) }) }));
  const dequeued = before.filter((q) => !now.has(q.submission_id)).map((q) => q.submission_id);
  return { ...(queued.length > 0 && { queued }), ...(dequeued.length > 0 && { dequeued }) };
}

/**
 * Record, for a session that cannot be hydrated (its checkpoint is unreadable), events
 * that explain it, keeping the stored checkpoint and clearing its unfinished flag. The
 * same single write path as every other commit.
 */
export async function recordUnrecoverable(writer: SharedWriter, stored: StoredSession, entries: string[]): Promise<void> {
  const outcome = await writer.submit({
    sessionId: stored.sessionId,
    head: stored.headSequence,
    batches: [`[${entries.join(',')}]`],
    checkpoint: stored.checkpoint,
    unfinished: false,
    transcriptFrom: 0,
    transcript: [],
    admissions: [],
  });
  if (!outcome.ok) throw outcome.error;
}
