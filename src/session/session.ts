/**
 * Session: one hosted session — the XState actor, its Inbox, its Recorder — and the pump
 * that feeds submissions to the actor one at a time, in ingress order, honouring the
 * cutoff. Subscribers receive every committed batch, in sequence order.
 */
import { createActor, type Actor } from 'xstate';
import type { AdmissionOutcome, EnqueueResult, SessionDescriptor, Submission } from '../../protocol/index.js';
import type { Journal } from '../journal/journal.js';
import type { CommittedBatch, SessionHandle } from './api.js';
import type { SessionDeps } from './deps.js';
import { Inbox } from './inbox.js';
import { sessionMachine } from './machine.js';
import { Recorder } from './recorder.js';
import { toDescriptor, type SessionState } from './state.js';
import { Transcript } from './transcript.js';
import type { ContextItem } from '../model/types.js';

export interface SessionOptions {
  journal: Journal;
  state: SessionState;
  headSequence: number;
  groupCommitMs: number;
  inboxCapacity: number;
  /** Everything of SessionDeps except what the session builds itself. */
  deps: Omit<SessionDeps, 'recorder' | 'transcript' | 'inbox' | 'isAdmitted'>;
  /** Called when the session stopped itself after repeated journal failures. */
  onFault?: (error: Error) => void;
  /** Called after every commit (the host uses it to track activity); not a subscriber. */
  onCommit?: () => void;
  log?: { warn(obj: object, msg: string): void; error(obj: object, msg: string): void };
}

/** Consecutive failed commits after which the session stops instead of retrying. */
const MAX_CONSECUTIVE_FAILURES = 2;

export class Session implements SessionHandle {
  readonly id: string;
  private readonly actor: Actor<typeof sessionMachine>;
  private readonly inbox: Inbox;
  private readonly recorder: Recorder;
  private readonly listeners = new Set<(batch: CommittedBatch) => void>();
  private readonly stopListeners = new Set<(reason: string) => void>();
  private pumping = false;
  private pumpAgain = false;
  private pumpScheduled = false;
  private failures = 0;
  private stopped = false;

  constructor(options: SessionOptions) {
    const { journal, state } = options;
    this.id = state.session_id;
    const transcript = new Transcript(state.transcript_length, () =>
      journal.loadTranscript(this.id).map((t) => JSON.parse(t) as ContextItem),
    );
    // The inbox's capacity also counts admitted messages waiting for their turn.
    this.inbox = new Inbox(options.inboxCapacity, state.last_ingress_seq, () => this.actor?.getSnapshot().context.state.queue.length ?? 0);
    this.recorder = new Recorder(journal, state, options.headSequence, transcript, options.groupCommitMs, {
      committed: (batch) => {
        this.failures = 0;
        options.onCommit?.();
        for (const l of this.listeners) {
          try {
            l(batch);
          } catch (err) {
            options.log?.error({ err, session_id: this.id }, 'batch subscriber failed');
          }
        }
      },
      failed: (error, committed) => {
        this.failures++;
        const fatal = this.failures >= MAX_CONSECUTIVE_FAILURES;
        options.log?.error({ err: error, session_id: this.id, fatal }, 'journal commit failed; rolling back');
        this.actor.send({ type: 'journal.failed', committed, message: error.message, fatal });
        if (fatal) {
          this.stopped = true;
          for (const item of this.inbox.stop()) item.onRejected?.('the session stopped after journal failures');
          options.onFault?.(error);
          const reason = `session ${this.id} stopped after journal failures (${error.message}); attach again to resume from its last checkpoint`;
          for (const l of [...this.stopListeners]) l(reason);
        }
      },
    }, () => this.inbox.lastAssigned);
    const deps: SessionDeps = {
      ...options.deps,
      recorder: this.recorder,
      transcript,
      inbox: this.inbox,
      isAdmitted: (id) => journal.isAdmitted(this.id, id),
    };
    this.actor = createActor(sessionMachine, { input: { state, deps, headSequence: () => this.recorder.headSequence } });
    this.actor.subscribe({
      next: (snapshot) => {
        if (snapshot.context.cutoff !== null || this.inbox.size > 0) this.schedulePump();
      },
      error: (err) => options.log?.error({ err, session_id: this.id }, 'session actor crashed'),
    });
  }

  /** Start the actor (hydration and, for unfinished work, recovery happen here). */
  start(): this {
    this.actor.start();
    this.recorder.flush();
    this.schedulePump();
    return this;
  }

  submit(
    submission: Submission,
    onAdmitted?: (outcome: AdmissionOutcome) => void,
    onRejected?: (message: string) => void,
  ): EnqueueResult {
    const result = this.inbox.enqueue({ submission, onAdmitted, onRejected });
    if (result.ok) this.schedulePump();
    return result;
  }

  descriptor(): SessionDescriptor {
    return toDescriptor(this.actor.getSnapshot().context.state, this.recorder.headSequence);
  }

  /** The session's current state (read-only view, for the host and tests). */
  get state(): SessionState {
    return this.actor.getSnapshot().context.state;
  }

  /** The actor's state value, e.g. "idle" or {turn: "running_tool"}. */
  get phase(): unknown {
    return this.actor.getSnapshot().value;
  }

  subscribe(listener: (batch: CommittedBatch) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  onStopped(listener: (reason: string) => void): () => void {
    this.stopListeners.add(listener);
    return () => this.stopListeners.delete(listener);
  }

  get subscriberCount(): number {
    return this.listeners.size;
  }

  headSequence(): number {
    return this.recorder.headSequence;
  }

  /** True when nothing is running or waiting: safe to evict from memory. */
  get isQuiet(): boolean {
    const s = this.state;
    return s.turn === null && s.queue.length === 0 && this.inbox.size === 0 && !this.recorder.hasPending;
  }

  get isStopped(): boolean {
    return this.stopped;
  }

  /**
   * Stop without ending anything in the journal: commit what is pending, cancel the
   * turn's children (a running tool's process group is killed). An open turn stays open
   * in the checkpoint and is recovered on the next start.
   */
  stop(): void {
    if (this.stopped) return;
    this.stopped = true;
    for (const item of this.inbox.stop()) item.onRejected?.('the session stopped before handling this submission');
    this.recorder.flush();
    this.actor.send({ type: 'stop' });
    this.recorder.dispose();
    this.actor.stop();
  }

  private schedulePump(): void {
    if (this.pumpScheduled) return;
    this.pumpScheduled = true;
    queueMicrotask(() => {
      this.pumpScheduled = false;
      this.pump();
    });
  }

  /** Feed submissions to the actor, one at a time, committing after each. */
  private pump(): void {
    if (this.pumping) {
      this.pumpAgain = true;
      return;
    }
    this.pumping = true;
    try {
      do {
        this.pumpAgain = false;
        while (!this.stopped) {
          const cutoff = this.actor.getSnapshot().context.cutoff;
          const item = this.inbox.peek();
          if (cutoff !== null && (!item || item.ingress_seq > cutoff)) {
            this.actor.send({ type: 'cutoff.reached' });
            this.recorder.flush();
            continue;
          }
          if (!item) break;
          this.inbox.shift();
          this.actor.send({ type: 'submission', item });
          this.recorder.flush();
        }
      } while (this.pumpAgain && !this.stopped);
    } finally {
      this.pumping = false;
    }
  }
}
