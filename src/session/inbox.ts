/**
 * The bounded submission Inbox of one session. Enqueue never waits: it answers with the
 * next ingress sequence, or busy/stopped. Submissions leave it in ingress order, one at a
 * time, when the session actor is ready for them. Admitted messages still waiting for
 * their own turn (the session's queue) occupy capacity too, so a flood of messages can
 * neither grow memory nor the journal's queue without bound.
 */
import type { AdmissionOutcome, EnqueueResult, Submission } from '../../protocol/index.js';

export interface InboxItem {
  submission: Submission;
  ingress_seq: number;
  onAdmitted?: ((outcome: AdmissionOutcome) => void) | undefined;
  onRejected?: ((message: string) => void) | undefined;
}

export class Inbox {
  private readonly items: InboxItem[] = [];
  private head = 0;
  private stopped = false;

  constructor(
    readonly capacity: number,
    /** Highest ingress sequence handed out before (restored from the checkpoint). */
    private lastSeq: number,
    /** Capacity taken outside the inbox (admitted messages waiting for their turn). */
    private readonly occupiedElsewhere: () => number = () => 0,
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
    if (this.size + this.occupiedElsewhere() >= this.capacity) {
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

  get isStopped(): boolean {
    return this.stopped;
  }
}
