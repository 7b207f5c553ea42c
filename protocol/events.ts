/** Journal event messages (`msg`) and the event envelope. Strict objects. */
import { z } from 'zod';
import {
  ApprovalDecisionSchema,
  ApprovalPolicySchema,
  CountSchema,
  IdentifierSchema,
  MillisSchema,
  ModelInfoSchema,
  TokenUsageSchema,
} from './common.js';
import { MessageOverridesSchema } from './ops.js';

const msg = <T extends string, S extends z.ZodRawShape>(type: T, shape: S) =>
  z.strictObject({ type: z.literal(type), ...shape });

/** Session created/configured. */
export const SessionConfiguredMsgSchema = msg('session_configured', {
  session_id: IdentifierSchema,
  model: ModelInfoSchema,
  cwd: z.string(),
  approval_policy: ApprovalPolicySchema,
  title: z.string().nullable(),
  /** UTF-8 bytes of the session's own system prompt (0: none); absent in journals written before it existed. */
  system_prompt_bytes: CountSchema.optional(),
});
/** How an admitted user message joined: started a turn, queued for its own, or steered the running one. */
export const UserMessageModeSchema = z.enum(['turn', 'queued', 'steer']);
export type UserMessageMode = z.infer<typeof UserMessageModeSchema>;
/** A user message was admitted; mode tells how it joined. */
export const UserMessageMsgSchema = msg('user_message', {
  text: z.string(),
  mode: UserMessageModeSchema,
});
/** `overrides`: the message's per-turn overrides, as sent (`message.overrides`). */
export const TurnStartedMsgSchema = msg('turn_started', { turn_id: IdentifierSchema, overrides: MessageOverridesSchema.optional() });
export const AgentMessageDeltaMsgSchema = msg('agent_message_delta', { delta: z.string() });
/** Full reply of one model step. */
export const AgentMessageMsgSchema = msg('agent_message', { text: z.string() });
export const ToolCallBeginMsgSchema = msg('tool_call_begin', {
  call_id: z.string().min(1),
  tool: z.string().min(1),
  arguments: z.unknown(),
});
/** Which output stream of a command a chunk came from. */
export const OutputStreamSchema = z.enum(['stdout', 'stderr']);
export type OutputStream = z.infer<typeof OutputStreamSchema>;
export const ExecOutputDeltaMsgSchema = msg('exec_output_delta', {
  call_id: z.string().min(1),
  stream: OutputStreamSchema,
  chunk: z.string(),
});
/** How a tool call ended. */
export const ToolCallStatusSchema = z.enum(['ok', 'error', 'denied', 'interrupted']);
export type ToolCallStatus = z.infer<typeof ToolCallStatusSchema>;
export const ToolCallEndMsgSchema = msg('tool_call_end', {
  call_id: z.string().min(1),
  status: ToolCallStatusSchema,
  output: z.string(),
  exit_code: z.number().int().nullable().optional(),
  duration_ms: z.number().nonnegative(),
});
/** A tool call waits for `exec_approval`; also the descriptor's `pending_approval`. */
export const ExecApprovalRequestMsgSchema = msg('exec_approval_request', {
  approval_id: IdentifierSchema,
  call_id: z.string().min(1),
  tool: z.string().min(1),
  arguments: z.unknown(),
  cwd: z.string(),
});
export const ApprovalResolvedMsgSchema = msg('approval_resolved', {
  approval_id: IdentifierSchema,
  decision: ApprovalDecisionSchema,
});
/** Usage of the last model call and running session total. */
export const TokenUsageMsgSchema = msg('token_usage', {
  usage: TokenUsageSchema,
  total: TokenUsageSchema,
});
/** A turn continues after restart (turn id is on the envelope). */
export const TurnResumedMsgSchema = msg('turn_resumed', { attempt: z.number().int().positive() });
export const TurnCompleteMsgSchema = msg('turn_complete', {
  last_message: z.string().nullable(),
  model_calls: CountSchema,
  tool_calls: CountSchema,
  failed_tool_calls: CountSchema,
  usage: TokenUsageSchema,
  duration_ms: z.number().nonnegative(),
  /**
   * `length`: the reply was still cut off by the output limit after the last continuation;
   * else `end_turn`. Always sent; absent only from turns journaled by earlier versions.
   */
  stop_reason: z.enum(['end_turn', 'length']).optional(),
});
export const TurnInterruptedMsgSchema = msg('turn_interrupted', { reason: z.string() });
/** Why a turn failed: `turn_failed.error.code` (docs/protocol.md lists what each means). */
export const TurnFailureCodeSchema = z.enum([
  // the turn's own limits and the runtime
  'max_model_steps_exceeded',
  'doom_loop_detected',
  'journal_write_failed',
  'recovery_failed',
  'unknown_route',
  // an exception inside the session's actor (the session stops; re-attaching resumes it)
  'internal',
  // the model call
  'model_error',
  'model_idle_timeout',
  'aborted',
  'incomplete_stream',
  'invalid_tool_arguments',
  'scripted_failure',
  // the provider's answer
  'provider_unavailable',
  'provider_error',
  'rate_limited',
  'unauthorized',
  'bad_request',
  // the request does not fit the model's context window (OpenAI context_length_exceeded, Anthropic "prompt is too long", HTTP 413)
  'context_overflow',
  // the context still does not fit after compaction, or compaction's circuit breaker is open (docs/context.md)
  'context_window_exceeded',
  // the session's token budget is spent (docs/tools.md); `session budget` raises it
  'budget_exceeded',
]);
export type TurnFailureCode = z.infer<typeof TurnFailureCodeSchema>;

export const TurnFailedMsgSchema = msg('turn_failed', {
  error: z.strictObject({ code: TurnFailureCodeSchema, message: z.string() }),
});
/** Model switched; ModelInfo fields flat. */
export const ModelChangedMsgSchema = msg('model_changed', { ...ModelInfoSchema.shape });
export const WarningMsgSchema = msg('warning', { message: z.string() });
export const SessionResumeRequestedMsgSchema = msg('session_resume_requested', {
  session_id: IdentifierSchema,
  context: z.unknown(),
});
export const CapabilityOutputMsgSchema = msg('capability_output', {
  capability: z.string(),
  command: z.string(),
  output: z.unknown(),
});

/** tools2 (docs/tools.md): the parent's `delegate` call `call_id` started child session `child_session_id`. */
export const SubagentStartedMsgSchema = msg('subagent_started', {
  call_id: z.string().min(1),
  child_session_id: IdentifierSchema,
});
/** How a subagent's turn ended. */
export const SubagentStatusSchema = z.enum(['complete', 'failed', 'interrupted']);
export type SubagentStatus = z.infer<typeof SubagentStatusSchema>;
export const SubagentFinishedMsgSchema = msg('subagent_finished', {
  call_id: z.string().min(1),
  child_session_id: IdentifierSchema,
  status: SubagentStatusSchema,
});
// ---- context (engineer "context"): thinking and compaction (docs/context.md) ----
/** A piece of the model's thinking, where the provider streams it. */
export const AgentReasoningDeltaMsgSchema = msg('agent_reasoning_delta', { delta: z.string() });
/** Why the context was compacted. */
export const CompactionReasonSchema = z.enum(['auto', 'manual', 'overflow']);
export type CompactionReason = z.infer<typeof CompactionReasonSchema>;
/** The model context's older part was replaced by one summary item (the journal keeps every original event). */
export const ContextCompactedMsgSchema = msg('context_compacted', {
  reason: CompactionReasonSchema,
  items_before: CountSchema,
  items_after: CountSchema,
  tokens_before: CountSchema,
  tokens_after: CountSchema,
  summary: z.string(),
});
export type AgentReasoningDeltaMsg = z.infer<typeof AgentReasoningDeltaMsgSchema>;
export type ContextCompactedMsg = z.infer<typeof ContextCompactedMsgSchema>;
// ---- end of context ----

export type SessionConfiguredMsg = z.infer<typeof SessionConfiguredMsgSchema>;
export type UserMessageMsg = z.infer<typeof UserMessageMsgSchema>;
export type TurnStartedMsg = z.infer<typeof TurnStartedMsgSchema>;
export type AgentMessageDeltaMsg = z.infer<typeof AgentMessageDeltaMsgSchema>;
export type AgentMessageMsg = z.infer<typeof AgentMessageMsgSchema>;
export type ToolCallBeginMsg = z.infer<typeof ToolCallBeginMsgSchema>;
export type ExecOutputDeltaMsg = z.infer<typeof ExecOutputDeltaMsgSchema>;
export type ToolCallEndMsg = z.infer<typeof ToolCallEndMsgSchema>;
export type ExecApprovalRequestMsg = z.infer<typeof ExecApprovalRequestMsgSchema>;
export type ApprovalResolvedMsg = z.infer<typeof ApprovalResolvedMsgSchema>;
export type TokenUsageMsg = z.infer<typeof TokenUsageMsgSchema>;
export type TurnResumedMsg = z.infer<typeof TurnResumedMsgSchema>;
export type TurnCompleteMsg = z.infer<typeof TurnCompleteMsgSchema>;
export type TurnInterruptedMsg = z.infer<typeof TurnInterruptedMsgSchema>;
export type TurnFailedMsg = z.infer<typeof TurnFailedMsgSchema>;
export type ModelChangedMsg = z.infer<typeof ModelChangedMsgSchema>;
export type WarningMsg = z.infer<typeof WarningMsgSchema>;
export type SessionResumeRequestedMsg = z.infer<typeof SessionResumeRequestedMsgSchema>;
export type CapabilityOutputMsg = z.infer<typeof CapabilityOutputMsgSchema>;
export type SubagentStartedMsg = z.infer<typeof SubagentStartedMsgSchema>;
export type SubagentFinishedMsg = z.infer<typeof SubagentFinishedMsgSchema>;

/** Any event message, discriminated on `type`. */
export const EventMsgSchema = z.discriminatedUnion('type', [
  SessionConfiguredMsgSchema,
  UserMessageMsgSchema,
  TurnStartedMsgSchema,
  AgentMessageDeltaMsgSchema,
  AgentMessageMsgSchema,
  ToolCallBeginMsgSchema,
  ExecOutputDeltaMsgSchema,
  ToolCallEndMsgSchema,
  ExecApprovalRequestMsgSchema,
  ApprovalResolvedMsgSchema,
  TokenUsageMsgSchema,
  TurnResumedMsgSchema,
  TurnCompleteMsgSchema,
  TurnInterruptedMsgSchema,
  TurnFailedMsgSchema,
  ModelChangedMsgSchema,
  WarningMsgSchema,
  SessionResumeRequestedMsgSchema,
  CapabilityOutputMsgSchema,
  SubagentStartedMsgSchema,
  SubagentFinishedMsgSchema,
  AgentReasoningDeltaMsgSchema,
  ContextCompactedMsgSchema,
]);
export type EventMsg = z.infer<typeof EventMsgSchema>;
/** The event message variant with the given `type`. */
export type EventMsgOf<T extends EventMsg['type']> = Extract<EventMsg, { type: T }>;
/** All event message type names. */
export type EventMsgType = EventMsg['type'];

/** The events that end a turn; every turn ends with exactly one of them. */
export const TURN_END_TYPES = ['turn_complete', 'turn_interrupted', 'turn_failed'] as const satisfies readonly EventMsgType[];
export type TurnEndMsg = EventMsgOf<(typeof TURN_END_TYPES)[number]>;
/** Whether `msg` ends a turn. */
export const isTurnEnd = (msg: EventMsg): msg is TurnEndMsg => (TURN_END_TYPES as readonly string[]).includes(msg.type);

/** Journaled event envelope. */
export const EventSchema = z.strictObject({
  submission_id: IdentifierSchema.nullable(),
  turn_id: IdentifierSchema.nullable(),
  ts: MillisSchema,
  /** Present when a field of `msg` was cut to fit a frame (docs/configuration.md). */
  truncated: z.literal(true).optional(),
  msg: EventMsgSchema,
});
export type Event = z.infer<typeof EventSchema>;
