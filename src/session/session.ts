/**
 * Session: one hosted session — the XState actor, its Inbox, its Recorder — and the pump
 * that feeds submissions to the actor one at a time, in ingress order, honouring the
 * cutoff. The pump looks up what the pure statechart needs (admitted before? head
 * sequence, another session) and passes it on the event; the actor's `change` effects go
 * to the Recorder. Subscribers receive every committed batch, in sequence order. An actor
 * that throws stops the session (never a zombie that answers `queued`).
 */
import { createActor, type Actor } from 'xstate';
import type { AdmissionOutcome, EnqueueResult, SessionDescriptor, Submission } from '../../protocol/index.js';
import type { CommittedBatch, SessionJournal } from '../journal/journal.js';
import type { McpToolset } from '../mcp/index.js';
import type { TranscriptItem } from './context.js';
import type { SharedWriter } from '../journal/writer.js';
import { queueFullMessage, queueIsFull } from './admission.js';
import type { SessionHandle } from './api.js';
import type { OtherSession, SessionDeps } from './deps.js';
import { JournalFencedError } from '../journal/store.js';
import { Inbox, type InboxItem } from './inbox.js';
import type { FaultCause, SessionEffect, SessionEvent, SubmissionFacts } from './chart_types.js';
import { sessionMachine } from './machine.js';
import { Recorder } from './recorder.js';
import { toDescriptor, type PendingChildApproval, type SessionState } from './state.js';
import { SessionPortsOf, type ToolboxFactory } from './session_ports.js';
import { SessionToolbox } from './toolbox.js';
import { Transcript } from './transcript.js';
import type { Change } from './tx.js';

export interface SessionOptions {
  journal: SessionJournal;
  /** The node's shared writer: every commit of this session goes into its tick. */
  writer: SharedWriter;
  state: SessionState;
  headSequence: number;
  groupCommitMs: number;
  inboxCapacity: number;
  deps: SessionDeps;
  /**
   * Builds the session's tools (built-in, delegate, MCP) when first needed — a model call's
   * offer, a tool call, `session tools`; closed when the session stops. Default: deps.tools only.
   */
  toolbox?: ToolboxFactory;
  /** The session's MCP toolset, acquired at hydration (absent or null: no MCP server is configured). */
  mcp?: McpToolset | null;
  /** What the session asks of its host and tells it (one object shared by the host's sessions). */
  host: SessionHostHooks;
  /** A brand-new session: its first change (session_configured), committed with the session row. */
  created?: { at: number; change: Change };
  /** The previous actor of this session faulted with its turn open: fail that turn with this. */
  fault?: FaultCause | null;
  log?: { warn(obj: object, msg: string): void; error(obj: object, msg: string): void };
}

/**
 * A session's side of its host: lookups and notifications, each naming the session, so
 * that one object serves every session of the host (no closures per session).
 */
export interface SessionHostHooks {
  /** The approval a subagent of this session waits for (its parent descriptor's `pending_child_approval`). */
  childApproval?(state: SessionState): PendingChildApproval | null;
  /** Another session's summary for resume_session; null if none or invalid. */
  lookupSession(sessionId: string): OtherSession | null | Promise<OtherSession | null>;
  /** The session stopped itself (journal failures, an actor crash); `hydratedAfter`: the fault it was hydrated with, if any. */
  onFault?(session: Session, cause: FaultCause, hydratedAfter: FaultCause | null): void;
  /** Cluster mode: a commit found this node's lease gone; the session stopped at once. */
  onFenced?(session: Session): void;
  /** Called after every commit, once per batch (activity, telemetry); not a subscriber. */
  onCommit?(session: Session, batch: CommittedBatch): void;
}

const NO_LISTENERS: ReadonlySet<never> = new Set();

/** Consecutive failed commits after which the session stops instead of retrying. */
const MAX_CONSECUTIVE_FAILURES = 2;

export class Session implements SessionHandle {
  readonly id: string;
  private readonly actor: Actor<typeof sessionMachine>;
  private readonly inbox: Inbox;
  private readonly recorder: Recorder;
  private readonly transcript: Transcript;
  private readonly ports: SessionPortsOf;
  /** Batch subscribers and stop listeners, made on the first subscription (most resident sessions have none). */
  private listeners: Set<(batch: CommittedBatch) => void> | null = null;
  private stopListeners: Set<(reason: string) => void> | null = null;
  private pumping = false;
  private pumpAgain = false;
  private pumpScheduled = false;
  private failures = 0;
  private stopped = false;
  /** The cutoff the actor is waiting on (taken when it entered draining/boundary): its epoch and ingress sequence. */
  private cutoffEpoch = 0;
  private cutoffSeq = 0;
  /** The last `context.streamed` handed to the Recorder (each is recorded once). */
  private streamedTaken: Change | null = null;

  constructor(private readonly options: SessionOptions) {
    const { journal, state } = options;
    this.id = state.session_id;
    const transcript = new Transcript(state.transcript_length, () => {
      const rows = journal.loadTranscript(this.id);
      const parse = (items: string[]) => items.map((t) => JSON.parse(t) as TranscriptItem);
      return rows instanceof Promise ? rows.then(parse) : parse(rows);
    });
    this.transcript = transcript;
    this.inbox = new Inbox(options.inboxCapacity, state.last_ingress_seq);
    this.recorder = new Recorder({
      writer: options.writer,
      state,
      head: options.headSequence,
      transcript,
      groupCommitMs: options.groupCommitMs,
      lastIngress: () => this.inbox.lastAssigned,
      ...(options.created && { createdAt: options.created.at }),
      hooks: {
        committed: (batch) => {
          this.failures = 0;
          options.host.onCommit?.(this, batch);
          for (const l of this.listeners ?? NO_LISTENERS) {
            try {
              l(batch);
            } catch (err) {
              options.log?.error({ err, session_id: this.id }, 'batch subscriber failed');
            }
          }
        },
        failed: (error, committed) => this.commitFailed(error, committed),
      },
    });
    this.ports = new SessionPortsOf(transcript, this.recorder, this.inbox, this, options.toolbox ?? defaultToolbox(options.deps), options.mcp ?? null);
    const { ports } = this;
    this.actor = createActor(sessionMachine, { input: { state, deps: options.deps, ports, fault: options.fault ?? null } });
    // One listener for every effect (a listener per effect type costs a Set and a bound function each, per session).
    this.actor.on('*', (effect) => this.carryOut(effect));
    this.actor.subscribe({
      next: (snapshot) => {
        this.takeStreamed(snapshot.context.streamed);
        const { atCutoff, cutoffEpoch } = snapshot.context;
        // The cutoff is the last ingress sequence assigned when the actor got there.
        if (atCutoff && cutoffEpoch !== this.cutoffEpoch) {
          this.cutoffEpoch = cutoffEpoch;
          this.cutoffSeq = this.inbox.lastAssigned;
        }
        if (atCutoff || this.inbox.size > 0) this.schedulePump();
      },
      error: (err) => this.crashed(err),
    });
  }

  /** A streaming change the chart left in its context (chart_change.ts `stream`), recorded once. */
  private takeStreamed(streamed: Change | null): void {
    if (streamed === null || streamed === this.streamedTaken) return;
    this.streamedTaken = streamed;
    this.recorder.record(streamed);
  }

  /** An effect the actor emitted, carried out in order (after the streaming change of its transition, if any). */
  private carryOut(effect: SessionEffect): void {
    this.takeStreamed(this.actor.getSnapshot().context.streamed);
    switch (effect.type) {
      case 'change':
        this.recorder.record(effect.change);
        return;
      case 'rollback':
        this.recorder.discardPending();
        return;
      case 'already_accepted': {
        const cb = effect.item.onAdmitted;
        if (cb) queueMicrotask(() => cb('already_accepted'));
        return;
      }
      case 'refused': {
        const cb = effect.item.onRejected;
        const { code, message } = effect;
        if (cb) queueMicrotask(() => cb(message, code));
        return;
      }
    }
  }

  /**
   * Start the actor (hydration and, for unfinished work, recovery happen here). Resolves
   * once what the start recorded (a new session's row and first batch, recovery's events)
   * is committed — true — or failed; the pump looks at submissions only after that.
   */
  start(): Promise<boolean> {
    // Recovery may need the transcript at once: with a journal answering promises, load it first.
    const loading = this.options.state.turn !== null || this.options.state.queue.length > 0 ? this.transcript.ready() : null;
    if (loading) {
      this.pumping = true;
      return loading.then(
        () => this.startNow(),
        (err: unknown) => {
          this.pumping = false;
          this.crashed(err);
          return false;
        },
      );
    }
    return this.startNow();
  }

  private startNow(): Promise<boolean> {
    if (this.stopped) return Promise.resolve(false);
    if (this.options.created) this.recorder.record(this.options.created.change);
    this.actor.start();
    if (this.stopped) return Promise.resolve(false);
    const started = this.recorder.flush();
    this.pumping = true;
    void started.then(() => {
      this.pumping = false;
      this.schedulePump();
    });
    return started;
  }

  submit(
    submission: Submission,
    onAdmitted?: (outcome: AdmissionOutcome) => void,
    onRejected?: (message: string, code?: 'busy' | 'internal') => void,
  ): EnqueueResult {
    if (!this.stopped && queueIsFull(this.state, this.options.deps.config, { submission, ingress_seq: 0 })) {
      return { ok: false, code: 'busy', message: queueFullMessage(this.options.deps.config) };
    }
    const result = this.inbox.enqueue({ submission, onAdmitted, onRejected });
    if (result.ok) this.schedulePump();
    return result;
  }

  descriptor(): SessionDescriptor {
    const state = this.state;
    return toDescriptor(state, this.recorder.headSequence, this.options.host.childApproval?.(state) ?? null);
  }

  /** The session's current state (read-only view, for the host and tests). */
  get state(): SessionState {
    return this.actor.getSnapshot().context.state;
  }

  subscribe(listener: (batch: CommittedBatch) => void): () => void {
    const listeners = (this.listeners ??= new Set());
    listeners.add(listener);
    return () => listeners.delete(listener);
  }

  onStopped(listener: (reason: string) => void): () => void {
    const listeners = (this.stopListeners ??= new Set());
    listeners.add(listener);
    return () => listeners.delete(listener);
  }

  get subscriberCount(): number {
    return this.listeners?.size ?? 0;
  }

  headSequence(): number {
    return this.recorder.headSequence;
  }

  /** True when nothing is running or waiting: safe to evict from memory. */
  get isQuiet(): boolean {
    const s = this.state;
    return s.turn === null && s.queue.length === 0 && this.inbox.size === 0 && !this.recorder.hasPending;
  }

  /**
   * Stop without ending anything in the journal: commit what is pending (resolves once
   * committed or failed), cancel the turn's children (a running tool's process group is
   * killed). An open turn stays open in the checkpoint and is recovered on the next start.
   */
  stop(): Promise<boolean> {
    if (this.stopped) return this.recorder.flush();
    this.stopped = true;
    for (const item of this.inbox.stop()) item.onRejected?.('the session stopped before handling this submission');
    const last = this.recorder.flush();
    this.actor.send({ type: 'stop' });
    this.actor.stop();
    this.ports.closeTools();
    return last;
  }

  /**
   * Cluster mode: the lease is gone — another node may be writing this session. Stop at
   * once, committing and emitting nothing more; the open turn stays in the journal for the
   * new owner to recover.
   */
  fence(reason: string): void {
    if (this.stopped) return;
    this.recorder.discardPending(reason);
    this.halt(null, reason);
    try {
      this.actor.stop();
    } catch {
      /* stopping a stopped actor */
    }
  }

  private commitFailed(error: Error, committed: SessionState): void {
    if (error instanceof JournalFencedError) {
      this.options.log?.warn({ session_id: this.id, err: error }, 'fenced: this node lost the session; stopping its actor');
      this.fence(`session ${this.id} moved to another node (${error.message}); attach again to follow it there`);
      this.options.host.onFenced?.(this);
      return;
    }
    this.failures++;
    const fatal = this.failures >= MAX_CONSECUTIVE_FAILURES;
    this.options.log?.error({ err: error, session_id: this.id, fatal }, 'journal commit failed; rolling back');
    this.send({ type: 'journal.failed', committed, message: error.message, fatal });
    if (fatal && !this.stopped) {
      const reason = `session ${this.id} paused: the journal cannot commit (${error.message}); attach again to resume its turn from the last checkpoint`;
      this.halt({ code: 'journal_write_failed', message: `the journal could not commit: ${error.message}` }, reason);
    }
  }

  /** The actor threw: stop the session; the host ends its open turn `internal` from the last checkpoint. */
  private crashed(err: unknown): void {
    const message = err instanceof Error ? err.message : String(err);
    this.options.log?.error({ err, session_id: this.id }, 'session actor crashed');
    if (this.stopped) return;
    this.recorder.discardPending('the session stopped after an internal error');
    const reason = `session ${this.id} stopped after an internal error (${message}); attach again to continue from its last checkpoint`;
    this.halt({ code: 'internal', message: `the session failed with an internal error: ${message}` }, reason);
    try {
      this.actor.stop();
    } catch {
      /* already stopped by the error */
    }
  }

  /** The session stops itself: refuse everything from now on and tell whoever listens. */
  private halt(cause: FaultCause | null, reason: string): void {
    this.stopped = true;
    for (const item of this.inbox.stop()) item.onRejected?.(reason);
    this.recorder.dispose();
    this.ports.closeTools();
    if (this.stopListeners) for (const l of [...this.stopListeners]) l(reason);
    if (cause) this.options.host.onFault?.(this, cause, this.options.fault ?? null);
  }

  private send(event: SessionEvent): void {
    this.actor.send(event);
  }

  private schedulePump(): void {
    if (this.pumpScheduled) return;
    this.pumpScheduled = true;
    queueMicrotask(() => {
      this.pumpScheduled = false;
      this.pump().catch((err: unknown) => this.crashed(err));
    });
  }

  /** What the actor needs to know about this submission, looked up here (not in a guard). */
  private async facts(item: InboxItem): Promise<SubmissionFacts> {
    const { id, op } = item.submission;
    // A journal that answers promises (PostgreSQL): the transcript is loaded before the actor may need it.
    const loading = this.transcript.ready();
    if (loading) await loading;
    return {
      alreadyAdmitted: op.type === 'message' && (await this.options.journal.isAdmitted(this.id, id)),
      headSequence: this.recorder.headSequence,
      other: op.type === 'resume_session' ? await this.options.host.lookupSession(op.session_id) : null,
      tools: op.type === 'capability_command' && op.capability === 'session' && op.command === 'tools' ? this.ports.toolbox().listing() : null,
    };
  }

  /**
   * Feed submissions to the actor, one at a time; after each, await its commit (the
   * writer's next tick) before looking at the next. Other sessions, the child actors of
   * this one and the server go on while it waits.
   */
  private async pump(): Promise<void> {
    if (this.pumping) {
      this.pumpAgain = true;
      return;
    }
    this.pumping = true;
    try {
      do {
        this.pumpAgain = false;
        while (!this.stopped) {
          const { atCutoff } = this.actor.getSnapshot().context;
          const item = this.inbox.peek();
          if (atCutoff && (!item || item.ingress_seq > this.cutoffSeq)) {
            const stepBoundary = this.actor.getSnapshot().matches({ turn: 'boundary' });
            this.send({ type: 'cutoff.reached' });
            // At a step boundary the change (the last tool result) rides in the next commit —
            // the next tool's start or the writer's tick — as it did before the pure chart,
            // instead of a transaction of its own per step. A turn's end commits at once.
            if (!stepBoundary) await this.recorder.flush();
            continue;
          }
          if (!item) break;
          this.inbox.shift();
          const facts = await this.facts(item);
          if (this.stopped) {
            item.onRejected?.('the session stopped before handling this submission');
            break;
          }
          this.send({ type: 'submission', item, facts });
          if (!this.stopped) await this.recorder.flush();
        }
      } while (this.pumpAgain && !this.stopped);
    } finally {
      this.pumping = false;
    }
  }
}

/** The tools of a session given no toolbox factory: deps.tools only. */
function defaultToolbox(deps: SessionDeps): ToolboxFactory {
  return (_session, mcp) => new SessionToolbox(deps.tools, mcp);
}
