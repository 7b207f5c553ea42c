/**
 * RemoteSession: a session whose actor runs on another node, as this node's clients see
 * it (cluster mode, docs/cluster.md). Its batches come from the shared journal: a commit
 * hint (LISTEN/NOTIFY: session and sequence only) makes it read what it has not yet
 * delivered, in sequence order, so its subscribers get the very frames the owner wrote,
 * gap-free (a hint that is lost is made up by the next hint or the catch-up after a
 * reconnect). Submissions go to the owner through the node's router. Its descriptor and
 * head are those of the session row read when it was last opened (`seen`), moved on by
 * what it delivers since; every journal read is asynchronous.
 */
import type { AdmissionOutcome, SessionDescriptor, Submission } from '../../protocol/index.js';
import type { SessionJournal, StoredSession } from '../journal/journal.js';
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
  /** The session row as last read (ClusterHost.open). */
  private stored: StoredSession;

  constructor(
    readonly id: string,
    stored: StoredSession,
    private readonly deps: RemoteSessionDeps,
  ) {
    this.stored = stored;
    this.delivered = stored.headSequence;
  }

  /** The session row as just read from the journal (a commit elsewhere may be newer than the last hint). */
  seen(stored: StoredSession): void {
    if (stored.headSequence >= this.stored.headSequence) this.stored = stored;
    if (this.listeners.size === 0) this.delivered = Math.max(this.delivered, stored.headSequence);
  }

  submit(
    submission: Submission,
    onAdmitted?: (outcome: AdmissionOutcome) => void,
    onRejected?: (message: string, code?: 'busy' | 'internal') => void,
  ): Promise<SubmitAnswer> {
    return this.deps.route(this.id, submission, onAdmitted, onRejected);
  }

  descriptor(): SessionDescriptor {
    return toDescriptor(parseCheckpoint(this.stored.checkpoint), this.headSequence());
  }

  /** The head as last read or delivered. */
  headSequence(): number {
    return Math.max(this.stored.headSequence, this.delivered);
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
    void this.readAll();
  }

  private async readAll(): Promise<void> {
    try {
      do {
        this.again = false;
        await this.readOn();
      } while (this.again);
    } catch (err) {
      this.deps.onError?.(err);
    } finally {
      this.reading = false;
    }
  }

  private async readOn(): Promise<void> {
    for (;;) {
      const page = await this.deps.journal.readAfter(this.id, this.delivered, PAGE);
      for (const batch of page) {
        if (batch.sequence <= this.delivered) continue; // delivered meanwhile
        if (batch.sequence !== this.delivered + 1) throw new Error(`journal of session ${this.id} skips from ${this.delivered} to ${batch.sequence}`);
        this.delivered = batch.sequence;
        for (const l of [...this.listeners]) l(batch);
      }
      if (page.length < PAGE) return;
    }
  }
}
