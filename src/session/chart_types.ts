/**
 * The session chart's vocabulary: its context, the events it takes (with the facts the
 * pump looked up), the effects it emits for the Session to carry out, and its input.
 */
import type { OtherSession, SessionDeps, SessionPorts, ToolListing } from './deps.js';
import type { InboxItem } from './inbox.js';
import type { CompactionEvent } from './compaction.js';
import type { ModelEvent } from './model_step.js';
import type { SessionState } from './state.js';
import type { StepFailure } from './turn.js';
import type { ToolEvent } from './tool_step.js';
import type { Change } from './tx.js';

/** Why the session's last actor ended with its turn open (a crash, a journal failure). */
export interface FaultCause {
  code: 'internal' | 'journal_write_failed';
  message: string;
}

export interface SessionContext {
  state: SessionState;
  deps: SessionDeps;
  ports: SessionPorts;
  /** True while draining between turns or at a step boundary (the pump holds the cutoff). */
  atCutoff: boolean;
  /** Incremented each time a cutoff is taken, so the pump reads a fresh one. */
  cutoffEpoch: number;
  /** Text streamed by the current model call so far (not durable). */
  stepText: string;
  /** A turn limit hit at the end of the last model step. */
  stepFailure: StepFailure | null;
  /** How the last model step finished. */
  stepFinish: 'stop' | 'tool_calls' | 'length' | null;
  /** Set at hydration when the previous actor of this session faulted with the turn open. */
  fault: FaultCause | null;
  /**
   * The Change of the last streaming action (model deltas, thinking, tool output): left
   * here instead of emitted; the Session hands each new one to the Recorder (see `stream`).
   */
  streamed: Change | null;
  /** The call id of the tool call being started (read by the action that spawns its child). */
  launching: string | null;
}

/** What the pump looked up for one submission. */
export interface SubmissionFacts {
  /** A `message` whose id this session admitted before (journal lookup). */
  alreadyAdmitted: boolean;
  /** The journal's head sequence now. */
  headSequence: number;
  /** For `resume_session`: the requested session's summary; null when none or invalid. */
  other: OtherSession | null;
  /** For `capability_command session tools`: every tool and MCP server as they are now. */
  tools?: ToolListing | null;
}

export type SessionEvent =
  | { type: 'submission'; item: InboxItem; facts: SubmissionFacts }
  | { type: 'cutoff.reached' }
  | ModelEvent
  | CompactionEvent
  | ToolEvent
  | { type: 'journal.failed'; committed: SessionState; message: string; fatal: boolean }
  | { type: 'stop' };

/** What the actor asks the Session to do (XState emitted events), in order. */
export type SessionEffect =
  | { type: 'change'; change: Change }
  /** Drop whatever is pending in the Recorder (after a failed commit). */
  | { type: 'rollback' }
  | { type: 'already_accepted'; item: InboxItem }
  | { type: 'refused'; item: InboxItem; code: 'busy'; message: string };

export interface SessionInput {
  state: SessionState;
  deps: SessionDeps;
  ports: SessionPorts;
  fault?: FaultCause | null;
}

