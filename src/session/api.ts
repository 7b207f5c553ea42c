/**
 * The session API the daemon (and tests) program against. Implemented by
 * SessionHost (host.ts) and Session (session.ts).
 */
import type {
  AdmissionOutcome,
  CreateSessionConfig,
  EnqueueResult,
  ErrorCode,
  SessionDescriptor,
  Submission,
} from '../../protocol/index.js';
import type { CommittedBatch } from '../journal/journal.js';

export type { CommittedBatch };

/** A forwarded submission's answer (cluster mode): the owner's refusal may carry any error code. */
export type SubmitAnswer = EnqueueResult | { ok: false; code: ErrorCode; message: string };

/** A live (hydrated) session. */
export interface SessionHandle {
  readonly id: string;
  /**
   * Never waits on the session: a full inbox answers busy, a stopped session stopped. A
   * session run by another node (cluster mode) answers once its owner has (a Promise). For a `message`,
   * `onAdmitted` is called once the message is durably committed (or was already).
   * The submission must already be validated by the protocol schema.
   */
  submit(
    submission: Submission,
    onAdmitted?: (outcome: AdmissionOutcome) => void,
    /**
     * Called instead of onAdmitted when the message is not admitted: `busy` when the
     * session's queue is full (limits.max_queued_turns), else `internal` (journal failure).
     */
    onRejected?: (message: string, code?: 'busy' | 'internal') => void,
  ): EnqueueResult | Promise<SubmitAnswer>;
  descriptor(): SessionDescriptor;
  /** Called synchronously after each commit, in sequence order. Returns unsubscribe. */
  subscribe(listener: (batch: CommittedBatch) => void): () => void;
  headSequence(): number;
  /**
   * Called if the session stops itself (repeated journal failures, an internal error). Its subscribers get no
   * more batches from this handle; attaching again hydrates it from its last checkpoint.
   */
  onStopped(listener: (reason: string) => void): () => void;
}

/** Options of SessionHost.list (protocol `list_sessions`). */
export interface ListOptions {
  limit: number;
  before?: string;
  /** Subagent sessions are left out unless true. */
  include_children?: boolean;
}

/**
 * The registry of all sessions in one data dir: creates them, hydrates them lazily from
 * their checkpoints, evicts idle ones, and reads the journal for replay. Everything that
 * may read the journal answers a promise (the journal may be a network hop away).
 */
export interface SessionHostApi {
  /** Throws AgentdError('invalid_frame') for an unknown route or a bad cwd. */
  create(config: CreateSessionConfig): Promise<SessionDescriptor>;
  /** Newest first; `before` is a session id from the previous page. */
  list(options: ListOptions): Promise<{ sessions: SessionDescriptor[]; next_before: string | null }>;
  /** Hydrates the session if needed; null when no such session exists. */
  open(sessionId: string): Promise<SessionHandle | null>;
  /**
   * The session when it runs here now and needs no journal read to be used (what `open`
   * would answer at once); undefined otherwise. Lets a burst of submissions reach its inbox
   * as sent, without a turn of the event loop between them.
   */
  ready?(sessionId: string): SessionHandle | undefined;
  /** Batches with sequence > after, ascending, at most `limit`. */
  readAfter(sessionId: string, after: number, limit: number): Promise<CommittedBatch[]>;
  /** The last `limit` batches with sequence < before, ascending. */
  readBefore(sessionId: string, before: number, limit: number): Promise<CommittedBatch[]>;
  /**
   * Delete the session and its subagent sessions (docs/sessions.md#deleting-sessions);
   * answers the deleted ids, the session first. Rejects with AgentdError `unknown_session`,
   * `busy` (a running or waiting turn, without `force`) or `stopped`.
   */
  delete(sessionId: string, options?: { force?: boolean }): Promise<string[]>;
  /** Be told of every delete (the session named, every deleted id); returns unsubscribe. */
  onDeleted(listener: (sessionId: string, deleted: string[]) => void): () => void;
  /** Finish committing, stop every session's children, close the database. */
  close(): Promise<void>;
}
