/**
 * RemoteSession: a session whose actor runs on another node, as this node's clients see
 * it (cluster mode, docs/cluster.md). Its batches come from the shared journal: a commit
 * hint (LISTEN/NOTIFY: session and sequence only) makes it read what it has not yet
 * delivered, in sequence order, so its subscribers get the very frames the owner wrote,
 * gap-free (a hint that is lost is made up by the next hint or the catch-up after a
 * reconnect). Submissions go to the owner through the node's router.
 */
import type { AdmissionOutcome, SessionDescriptor, Submission } from '../../protocol/index.js';
import type { SessionJournal } from '../journal/journal.js';
import type { CommittedBatch, SessionHandle, SubmitAnswer } from '../session/api.js';
import { parseCheckpoint, toDescriptor } from '../session/state.js';

export interface RemoteSessionDeps {
  journal: SessionJournal;
  /** Forward (or, if this node can take the session, run) a submission. */
  route(
    sessionId: string,
    submission: Submission,
    onAdmitted?: (outcome: AdmissionOutcome) => void,
    onRejected?: (message: string, code?: 'busy' | 'internal') => void,
  ): Promise<SubmitAnswer>;
  /** The last subscriber left: the node may forget this handle. */
  idle(session: RemoteSession): void;
  onError?(err: unknown): void;
}

/** Batches read per journal page while catching up on hints. */
const PAGE = 256;

export class RemoteSession implements SessionHandle {
  private readonly listeners = new Set<(batch: CommittedBatch) => void>();
  /** The last sequence handed to the listeners (or known committed when there were none). */
  private delivered: number;
  private reading = false;
  private again = false;

  constructor(
    readonly id: string,
    head: number,
    private readonly deps: RemoteSessionDeps,
  ) {
    this.delivered = head;
  }

  submit(
    submission: Submission,
    onAdmitted?: (outcome: AdmissionOutcome) => void,
    onRejected?: (message: string, code?: 'busy' | 'internal') => void,
  ): Promise<SubmitAnswer> {
    return this.deps.route(this.id, submission, onAdmitted, onRejected);
  }

  descriptor(): SessionDescriptor {
    const stored = this.deps.journal.loadSession(this.id);
    if (!stored) throw new Error(`session ${this.id} is not in the journal`);
    return toDescriptor(parseCheckpoint(stored.checkpoint), stored.headSequence);
  }

  /** The journal's head now (a commit elsewhere may be newer than the last hint). */
  headSequence(): number {
    const stored = this.deps.journal.loadSession(this.id);
    const head = stored?.headSequence ?? this.delivered;
    if (this.listeners.size === 0) this.delivered = Math.max(this.delivered, head);
    return head;
  }

  subscribe(listener: (batch: CommittedBatch) => void): () => void {
    this.listeners.add(listener);
    return () => {
      this.listeners.delete(listener);
      if (this.listeners.size === 0) this.deps.idle(this);
    };
  }

  /** A remote session does not stop on this node: when its owner dies another takes over. */
  onStopped(): () => void {
    return () => undefined;
  }

  get subscriberCount(): number {
    return this.listeners.size;
  }

  /** A commit up to `sequence` was hinted (or a catch-up is due: no sequence). */
  hint(sequence = Number.POSITIVE_INFINITY): void {
    if (sequence <= this.delivered) return;
    if (this.reading) {
      this.again = true;
      return;
    }
    this.reading = true;
    try {
      do {
        this.again = false;
        this.readOn();
      } while (this.again);
    } catch (err) {
      this.deps.onError?.(err);
    } finally {
      this.reading = false;
    }
  }

  private readOn(): void {
    for (;;) {
      const page = this.deps.journal.readAfter(this.id, this.delivered, PAGE);
      for (const batch of page) {
        if (batch.sequence !== this.delivered + 1) throw new Error(`journal of session ${this.id} skips from ${this.delivered} to ${batch.sequence}`);
        this.delivered = batch.sequence;
        for (const l of [...this.listeners]) l(batch);
      }
      if (page.length < PAGE) return;
    }
  }
}
