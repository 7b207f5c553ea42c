/**
 * Tx: one state change of a session in progress — the new SessionState and the events it
 * emits. Actions build a Tx and hand it to the Recorder, which journals events and state
 * together.
 */
import {
  appendMessageDeltas,
  appendOutputDeltas,
  encodeEvent,
  type EventIds,
  type EventMsg,
  type ExecOutputDeltaMsg,
} from '../../protocol/index.js';
import type { PendingAdmission } from './recorder.js';
import type { SessionState } from './state.js';

export interface EventTags {
  submission_id?: string | null;
  turn_id?: string | null;
}

export class Tx {
  /** The events of this change, each serialized once (JSON of the event envelope). */
  readonly entries: string[] = [];
  readonly now = Date.now();
  /** A message admitted by this change: acknowledged once its batch commits. */
  admission: PendingAdmission | undefined;

  constructor(public state: SessionState) {}

  /**
   * Emit one event. `turn_id` defaults to the active turn's id and `submission_id` to the
   * submission that started that turn (the turn's events are caused by it).
   */
  emit(msg: EventMsg, tags: EventTags = {}): this {
    const turn = tags.turn_id === undefined ? this.state.turn : null;
    this.entries.push(
      encodeEvent(
        msg,
        tags.submission_id !== undefined ? tags.submission_id : (turn?.submission_id ?? null),
        tags.turn_id !== undefined ? tags.turn_id : (turn?.turn_id ?? null),
        this.now,
      ),
    );
    return this;
  }

  /**
   * The hot path: many small output events of the active turn serialized straight to
   * JSON — byte-identical to what `emit` writes, without the intermediate objects.
   */
  emitMessageDeltas(deltas: readonly string[]): this {
    appendMessageDeltas(this.entries, this.turnIds(), this.now, deltas);
    return this;
  }

  /** Command output chunks of one tool call (see emitMessageDeltas). */
  emitOutputDeltas(callId: string, chunks: ReadonlyArray<Pick<ExecOutputDeltaMsg, 'stream' | 'chunk'>>): this {
    appendOutputDeltas(this.entries, this.turnIds(), this.now, callId, chunks);
    return this;
  }

  /** The ids the active turn's events carry. */
  private turnIds(): EventIds {
    const turn = this.state.turn;
    return { submission_id: turn?.submission_id ?? null, turn_id: turn?.turn_id ?? null };
  }

  /** Replace fields of the session state (immutably). */
  set(patch: Partial<SessionState>): this {
    this.state = { ...this.state, ...patch, updated_at: this.now };
    return this;
  }

  /** Replace fields of the active turn (immutably); no-op without a turn. */
  setTurn(patch: Partial<NonNullable<SessionState['turn']>>): this {
    if (this.state.turn) this.state = { ...this.state, turn: { ...this.state.turn, ...patch }, updated_at: this.now };
    return this;
  }

  get turn(): NonNullable<SessionState['turn']> {
    const turn = this.state.turn;
    if (!turn) throw new Error('no active turn');
    return turn;
  }
}
