/**
 * The bounded submission Inbox of one session (modelled on XState's Mailbox): a FIFO of
 * submissions not yet handled. Enqueue never waits: it answers with the next ingress
 * sequence, or busy/stopped. It knows nothing of the actor: the pump takes submissions
 * out, in ingress order, one at a time. Admitted messages waiting for their own turn are
 * not here (they are in the checkpoint's queue, bounded by `limits.max_queued_turns`).
 */
import type { AdmissionOutcome, EnqueueResult, Submission } from '../../protocol/index.js';

export interface InboxItem {
  submission: Submission;
  ingress_seq: number;
  onAdmitted?: ((outcome: AdmissionOutcome) => void) | undefined;
  onRejected?: ((message: string, code?: 'busy' | 'internal') => void) | undefined;
}

export class Inbox {
  private readonly items: InboxItem[] = [];
  private head = 0;
  private stopped = false;

  constructor(
    readonly capacity: number,
    /** Highest ingress sequence handed out before (restored from the checkpoint). */
    private lastSeq: number,
  ) {}

  /** Number of submissions waiting in the inbox. */
  get size(): number {
    return this.items.length - this.head;
  }

  /** The last ingress sequence assigned: the cutoff when read at a turn or step end. */
  get lastAssigned(): number {
    return this.lastSeq;
  }

  enqueue(item: Omit<InboxItem, 'ingress_seq'>): EnqueueResult {
    if (this.stopped) return { ok: false, code: 'stopped', message: 'the session is stopped' };
    if (this.size >= this.capacity) {
      return { ok: false, code: 'busy', message: `the session inbox is full (capacity ${this.capacity})` };
    }
    const ingress_seq = ++this.lastSeq;
    this.items.push({ ...item, ingress_seq });
    return { ok: true, ingress_seq };
  }

  peek(): InboxItem | undefined {
    return this.items[this.head];
  }

  shift(): InboxItem | undefined {
    const item = this.items[this.head];
    if (!item) return undefined;
    this.items[this.head++] = undefined as never;
    if (this.head > 64 && this.head * 2 > this.items.length) {
      this.items.splice(0, this.head);
      this.head = 0;
    }
    return item;
  }

  /** Refuse new submissions; returns what was still waiting. */
  stop(): InboxItem[] {
    this.stopped = true;
    const rest = this.items.slice(this.head);
    this.items.length = 0;
    this.head = 0;
    return rest;
  }
}
