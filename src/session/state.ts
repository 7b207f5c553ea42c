/**
 * SessionState: everything durable about a session except its journal and transcript.
 * It is the checkpoint: serialized into the journal with every batch, restored on
 * hydration. Treated as immutable — every change makes a new object — so the last
 * committed state can be kept by reference for rollback.
 */
import type {
  ApprovalPolicy,
  CompactionReason,
  ExecApprovalRequestMsg,
  MessageOverrides,
  ModelInfo,
  SessionDescriptor,
  SessionMcpServers,
  TokenUsage,
} from '../../protocol/index.js';
import type { ToolCallRequest } from '../model/types.js';
import type { ToolApproval } from './toolbox.js';

export const CHECKPOINT_VERSION = 1;

/** A message admitted with mode queue, waiting for its own turn. */
export interface QueuedMessage {
  submission_id: string;
  text: string;
  /** The message's per-turn overrides, as sent. */
  overrides?: MessageOverrides;
}

/** The model context's bookkeeping (docs/context.md). */
export interface ContextAccount {
  /** Estimate of the next call's input tokens: last reported + bytes/4 of what was added since. */
  estimated_tokens: number;
  /** Items in the model's view now (a summary counts one). */
  items: number;
  /** Failed compactions in a row (the circuit breaker opens at `compaction.max_failures`). */
  compaction_failures: number;
}

/** A tool call of the current model step and where it stands. */
export interface CallState {
  call: ToolCallRequest;
  /** The tool's process/work was started (committed before it starts). */
  started: boolean;
  /** Set when the approval for this call was granted. */
  approved: boolean;
  started_at: number | null;
  /** Set when the call's arguments were refused (too large or too deep): why. */
  refused?: string;
  /** The tool's approval mode as offered to the model (absent: the built-in tool decides). */
  approval?: ToolApproval;
  /** A `delegate` call: the child session it started (recorded with `subagent_started`). */
  child_session_id?: string;
  /**
   * The call ended (its `tool_call_end` was emitted) but an earlier call of the step has
   * not: its result waits here to join the transcript in the model's order (docs/tools.md).
   */
  ended?: EndedCall;
}

/** A finished call's result held for the transcript. */
export interface EndedCall {
  output: string;
  exit_code?: number;
}

export interface ActiveTurn {
  turn_id: string;
  submission_id: string | null;
  started_at: number;
  model_calls: number;
  tool_calls: number;
  failed_tool_calls: number;
  usage: TokenUsage;
  last_message: string | null;
  /** Calls of the current step whose result is not yet in the transcript, in the model's order. */
  calls: CallState[];
  /** Approval the turn is waiting for, if any (the exec_approval_request payload). */
  approval: ExecApprovalRequestMsg | null;
  /** Steer texts admitted but not yet given to the model. */
  steer: string[];
  /** Keys (tool + arguments) of the previous model step's tool calls, for doom-loop detection. */
  recent_calls: string[];
  /** How many consecutive steps each of `recent_calls` was called in (same order; absent: 1 each). */
  recent_streaks?: number[];
  /** Length-finish continuations used for the current reply. */
  output_recoveries: number;
  /**
   * The reply so far while it is being continued after a length stop (docs/models.md): not
   * yet in the transcript or an `agent_message`; the continuation call sees it.
   */
  reply_prefix?: string;
  /** `length` when the turn's last reply was still cut off after the last continuation. */
  stop_reason?: 'length';
  /** Restart recoveries of this turn so far. */
  recovery_attempts: number;
  // ---- context (all optional: checkpoints written before they existed lack them) ----
  /** The overrides this turn runs with (route, reasoning effort), from its message. */
  overrides?: MessageOverrides;
  /** A compaction asked for before the next model call (manual, or after an overflow error). */
  compaction?: Exclude<CompactionReason, 'auto'> | null;
  /** The turn exists only to compact (a manual compaction while idle). */
  compact_only?: boolean;
  /** A compaction was already tried for the next model call (no second automatic one). */
  compacted_for_call?: boolean;
  /** The next model call is the one retry after an overflow error. */
  overflow_retried?: boolean;
}

export interface SessionState {
  version: number;
  session_id: string;
  title: string | null;
  created_at: number;
  updated_at: number;
  cwd: string;
  approval_policy: ApprovalPolicy;
  model: ModelInfo;
  /** Highest ingress sequence handed out (continues across hydrations). */
  last_ingress_seq: number;
  queue: QueuedMessage[];
  turn: ActiveTurn | null;
  /** Keys of tool calls approved for the rest of the session. */
  approved_for_session: string[];
  usage_total: TokenUsage;
  /** Number of transcript items (the model context) committed with this state. */
  transcript_length: number;
  /** A subagent (docs/tools.md): the parent session and its `delegate` call; absent for a root session. */
  parent?: { session_id: string; call_id: string };
  /** Subagent depth: 0 for a root session, 1 for its child, … (absent: 0). */
  depth?: number;
  /** The session's own system prompt (`create_session.config.system_prompt`); null: none. */
  system_prompt: string | null;
  /** The model context's token estimate and compaction bookkeeping. */
  context: ContextAccount;
  /** The session admitted its first message (which names it when it has no title; docs/sessions.md). */
  first_message_seen?: boolean;
  /** A `session compact` received between turns (its submission id): the next turn compacts first. */
  compaction_requested?: string | null;
  /** Shell commands that never wait for approval under `ask` (`create_session.config.shell_allow`). */
  shell_allow?: string[];
  /** Input + output tokens the session may spend (docs/tools.md); null or absent: no budget. */
  token_budget?: number | null;
  /** The session's own MCP servers (`create_session.config.mcp_servers`, as given, validated); absent: none. */
  mcp_servers?: SessionMcpServers;
}

/** A subagent's pending approval, as its parent's descriptor shows it. */
export type PendingChildApproval = NonNullable<SessionDescriptor['pending_child_approval']>;

export const ZERO_USAGE: TokenUsage = { input_tokens: 0, output_tokens: 0 };

/**
 * Add token counts, saturating at MAX_SAFE_INTEGER instead of losing precision. The
 * cached and reasoning counters appear once either side has them.
 */
export function addUsage(a: TokenUsage, b: TokenUsage): TokenUsage {
  const add = (x: number, y: number) => Math.min(Number.MAX_SAFE_INTEGER, x + y);
  const sum: TokenUsage = { input_tokens: add(a.input_tokens, b.input_tokens), output_tokens: add(a.output_tokens, b.output_tokens) };
  if (a.cached_input_tokens !== undefined || b.cached_input_tokens !== undefined) {
    sum.cached_input_tokens = add(a.cached_input_tokens ?? 0, b.cached_input_tokens ?? 0);
  }
  if (a.reasoning_tokens !== undefined || b.reasoning_tokens !== undefined) {
    sum.reasoning_tokens = add(a.reasoning_tokens ?? 0, b.reasoning_tokens ?? 0);
  }
  return sum;
}

/** Usage as `token_usage` carries it: every counter, 0 where the provider reported none. */
export function fullUsage(u: TokenUsage): Required<TokenUsage> {
  return { input_tokens: u.input_tokens, output_tokens: u.output_tokens, cached_input_tokens: u.cached_input_tokens ?? 0, reasoning_tokens: u.reasoning_tokens ?? 0 };
}

export const EMPTY_CONTEXT: ContextAccount = { estimated_tokens: 0, items: 0, compaction_failures: 0 };

/** The checkpoint of a brand-new session. */
export function newSessionState(fields: {
  session_id: string;
  cwd: string;
  approval_policy: SessionState['approval_policy'];
  model: ModelInfo;
  title: string | null;
  at: number;
  parent?: { session_id: string; call_id: string };
  depth?: number;
  system_prompt?: string | null;
  /** Estimated tokens of an empty context (system prompt and tool specs). */
  base_tokens?: number;
  shell_allow?: string[];
  token_budget?: number | null;
  mcp_servers?: SessionMcpServers;
}): SessionState {
  return {
    version: CHECKPOINT_VERSION,
    session_id: fields.session_id,
    title: fields.title,
    created_at: fields.at,
    updated_at: fields.at,
    cwd: fields.cwd,
    approval_policy: fields.approval_policy,
    model: fields.model,
    last_ingress_seq: 0,
    queue: [],
    turn: null,
    approved_for_session: [],
    usage_total: ZERO_USAGE,
    transcript_length: 0,
    ...(fields.parent && { parent: fields.parent }),
    ...(fields.depth && { depth: fields.depth }),
    system_prompt: fields.system_prompt ?? null,
    context: { ...EMPTY_CONTEXT, estimated_tokens: fields.base_tokens ?? 0 },
    ...(fields.shell_allow && fields.shell_allow.length > 0 && { shell_allow: fields.shell_allow }),
    token_budget: fields.token_budget ?? null,
    ...(fields.mcp_servers && Object.keys(fields.mcp_servers).length > 0 && { mcp_servers: fields.mcp_servers }),
  };
}

/** A turn that has just started. */
export function newTurn(turn_id: string, submission_id: string | null, at: number, extra: Partial<ActiveTurn> = {}): ActiveTurn {
  return {
    turn_id,
    submission_id,
    started_at: at,
    model_calls: 0,
    tool_calls: 0,
    failed_tool_calls: 0,
    usage: ZERO_USAGE,
    last_message: null,
    calls: [],
    approval: null,
    steer: [],
    recent_calls: [],
    output_recoveries: 0,
    recovery_attempts: 0,
    ...extra,
  };
}

/** A session has unfinished work when a turn is open or admitted messages wait. */
export function isUnfinished(state: SessionState): boolean {
  return state.turn !== null || state.queue.length > 0;
}

export function sessionStatus(state: SessionState): SessionDescriptor['status'] {
  if (!state.turn) return 'idle';
  return state.turn.approval ? 'awaiting_approval' : 'running';
}

export function toDescriptor(
  state: SessionState,
  headSequence: number,
  pendingChildApproval: PendingChildApproval | null = null,
): SessionDescriptor {
  return {
    session_id: state.session_id,
    title: state.title,
    created_at: state.created_at,
    updated_at: state.updated_at,
    status: sessionStatus(state),
    model: state.model,
    cwd: state.cwd,
    approval_policy: state.approval_policy,
    head_sequence: headSequence,
    active_turn_id: state.turn?.turn_id ?? null,
    pending_approval: state.turn?.approval ?? null,
    queued_turns: state.queue.length,
    parent_session_id: state.parent?.session_id ?? null,
    parent_call_id: state.parent?.call_id ?? null,
    pending_child_approval: pendingChildApproval,
    context: { estimated_tokens: state.context?.estimated_tokens ?? 0, context_window: state.model.context_window },
    token_budget: state.token_budget ?? null,
  };
}

/**
 * The queue's texts from their stored entries (a checkpoint lists only the queue's ids;
 * one written before that holds the texts itself and is returned as it is). Throws when a
 * queued message's entry is missing.
 */
export function withQueuedTexts(state: SessionState, entries: ReadonlyArray<{ submission_id: string; entry: string }> = []): SessionState {
  if (state.queue.every((q) => typeof q.text === 'string')) return state;
  const byId = new Map(entries.map((e) => [e.submission_id, e.entry]));
  const queue = state.queue.map((q) => {
    if (typeof q.text === 'string') return q;
    const entry = byId.get(q.submission_id);
    if (entry === undefined) throw new Error(`queued message ${q.submission_id} has no stored text`);
    const { text, overrides } = JSON.parse(entry) as Pick<QueuedMessage, 'text' | 'overrides'>;
    return { submission_id: q.submission_id, text, ...(overrides && { overrides }) };
  });
  return { ...state, queue };
}

/** Parse a stored checkpoint; throws with a clear message when it is not one. */
export function parseCheckpoint(text: string): SessionState {
  const state = JSON.parse(text) as SessionState;
  if (typeof state !== 'object' || state === null || state.version !== CHECKPOINT_VERSION || !state.session_id) {
    throw new Error(`unsupported checkpoint (version ${(state as { version?: unknown })?.version})`);
  }
  // Sessions created before the system prompt existed have none (docs/context.md).
  if (state.system_prompt === undefined) state.system_prompt = null;
  return state;
}

/** A checkpoint written before context accounting existed (its estimate is rebuilt from the transcript at hydration). */
export function lacksContext(state: SessionState): boolean {
  return (state as { context?: unknown }).context === undefined;
}
