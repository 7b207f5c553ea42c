/**
 * Tx: one state change of a session in progress — the new SessionState and the events it
 * emits, and the transcript items it appends. Actions build a Tx; its Change goes to the
 * Recorder, which journals events, items and state together.
 */
import {
  appendMessageDeltas,
  appendOutputDeltas,
  type EventIds,
  type EventMsg,
  type ExecOutputDeltaMsg,
} from '../../protocol/index.js';
import { estimateTokens, type TranscriptItem } from './context.js';
import { eventEntry, MAX_EVENT_BYTES } from './event_fit.js';
import type { SessionState } from './state.js';

/** A message admitted by a change: acknowledged once its batch commits. */
export interface PendingAdmission {
  submission_id: string;
  onAdmitted?: ((outcome: 'accepted') => void) | undefined;
  onRejected?: ((message: string) => void) | undefined;
}

/** What one change produced: the events, the state after them, transcript items, an admission. */
export interface Change {
  entries: string[];
  state: SessionState;
  items: TranscriptItem[];
  /** Each item's JSON (its transcript row), serialized once by the Tx; serialized on commit when absent. */
  itemsJson?: string[];
  admission: PendingAdmission | undefined;
}

/** A delta this long takes the generic path (which cuts what does not fit a frame). */
const FAST_DELTA_MAX_CHARS = Math.floor(MAX_EVENT_BYTES / 8);

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
  /** Transcript items (model context) this change appends, in order. */
  readonly items: TranscriptItem[] = [];
  /** Their JSON, in order (used for the token estimate and as the transcript rows). */
  readonly itemsJson: string[] = [];

  constructor(public state: SessionState) {}

  /**
   * Append an item to the model context (applied with the change); its estimated tokens
   * are added to the context's estimate. A compaction marker sets the estimate itself
   * (see compaction.ts).
   */
  append(item: TranscriptItem): this {
    const json = JSON.stringify(item);
    this.items.push(item);
    this.itemsJson.push(json);
    if (item.role !== 'compaction') {
      const c = this.state.context;
      // itemTokens(item), from the JSON already at hand.
      const tokens = estimateTokens(json);
      this.state = {
        ...this.state,
        context: { ...c, estimated_tokens: Math.min(Number.MAX_SAFE_INTEGER, c.estimated_tokens + tokens), items: c.items + 1 },
      };
    }
    return this;
  }

  /** Did this change do anything? */
  get changed(): boolean {
    return this.entries.length > 0 || this.items.length > 0 || this.admission !== undefined;
  }

  /** The change as plain data, for the Recorder. */
  toChange(): Change {
    return { entries: this.entries, state: this.state, items: this.items, itemsJson: this.itemsJson, admission: this.admission };
  }

  /**
   * Emit one event. `turn_id` defaults to the active turn's id and `submission_id` to the
   * submission that started that turn (the turn's events are caused by it).
   */
  emit(msg: EventMsg, tags: EventTags = {}): this {
    const turn = tags.turn_id === undefined ? this.state.turn : null;
    this.entries.push(
      eventEntry(
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
    if (deltas.every((d) => d.length <= FAST_DELTA_MAX_CHARS)) appendMessageDeltas(this.entries, this.turnIds(), this.now, deltas);
    else for (const delta of deltas) this.emit({ type: 'agent_message_delta', delta });
    return this;
  }

  /** Command output chunks of one tool call (see emitMessageDeltas). */
  emitOutputDeltas(callId: string, chunks: ReadonlyArray<Pick<ExecOutputDeltaMsg, 'stream' | 'chunk'>>): this {
    if (chunks.every((c) => c.chunk.length <= FAST_DELTA_MAX_CHARS)) {
      appendOutputDeltas(this.entries, this.turnIds(), this.now, callId, chunks);
    } else {
      for (const c of chunks) this.emit({ type: 'exec_output_delta', call_id: callId, stream: c.stream, chunk: c.chunk });
    }
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
