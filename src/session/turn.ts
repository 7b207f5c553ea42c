/**
 * Turn transitions: starting a turn, ending a model step, and the three ways a turn ends
 * (complete, interrupted, failed). Each works on a Tx so events and state change together.
 */
import type { TokenUsage, TurnFailureCode } from '../../protocol/index.js';
import type { MessageOverrides } from '../../protocol/index.js';
import type { ContextItem, ReasoningBlock, ToolCallRequest } from '../model/types.js';
import type { SessionDeps } from './deps.js';
import type { ToolApproval } from './toolbox.js';
import { applicableOverrides } from './routing.js';
import { addUsage, fullUsage, newTurn, type ActiveTurn, type CallState } from './state.js';
import { callKey, toolArgumentsProblem } from './tool_args.js';
import { appendResult, endCall } from './tool_step.js';
import type { Tx } from './tx.js';

/** What one finished model call produced. */
export interface StepResult {
  text: string;
  calls: ToolCallRequest[];
  finish: 'stop' | 'tool_calls' | 'length';
  usage: TokenUsage | null;
  /** The reply's thinking blocks, kept on its transcript item and sent back. */
  reasoning?: ReasoningBlock[];
}

const INTERRUPTED_NOTE = 'The user interrupted the previous turn; its unfinished tool calls did not complete.';

/** Open a new turn for a user message, with the message's overrides that apply (docs/models.md). */
export function startTurn(tx: Tx, deps: SessionDeps, submissionId: string | null, text: string, requested?: MessageOverrides): void {
  const overrides = applicableOverrides(tx, deps, requested, submissionId);
  const turn = newTurn(deps.newId('turn'), submissionId, tx.now, overrides ? { overrides } : {});
  tx.set({ turn });
  tx.append({ role: 'user', text });
  tx.emit({ type: 'turn_started', turn_id: turn.turn_id, ...(overrides && { overrides }) }, { submission_id: submissionId });
}

/** Start the turn of the oldest queued message. */
export function startQueuedTurn(tx: Tx, deps: SessionDeps): void {
  const [next, ...rest] = tx.state.queue;
  if (!next) return;
  tx.set({ queue: rest });
  startTurn(tx, deps, next.submission_id, next.text, next.overrides);
}

/** Give steer messages admitted so far to the next model call. */
export function drainSteer(tx: Tx): void {
  const turn = tx.state.turn;
  if (!turn || turn.steer.length === 0) return;
  for (const text of turn.steer) tx.append({ role: 'user', text });
  tx.setTurn({ steer: [] });
}

/** A turn limit hit at the end of a model step. */
export interface StepFailure {
  code: TurnFailureCode;
  message: string;
}

/**
 * Record a finished model call: its reply, usage and tool calls. Returns the failure when
 * a turn limit is hit (doom loop), else null.
 */
export function endModelStep(
  tx: Tx,
  deps: SessionDeps,
  step: StepResult,
  approvals: Readonly<Record<string, ToolApproval>> = {},
): StepFailure | null {
  const turn = tx.turn;
  // A reply continued after a length stop is one reply (docs/models.md): the text so far
  // waits in the turn until the reply ends, then goes out whole.
  const text = (turn.reply_prefix ?? '') + step.text;
  const cutOff = step.finish === 'length' && step.calls.length === 0;
  const continues = cutOff && turn.output_recoveries < deps.config.limits.max_output_recovery_attempts;
  if (!continues && (text || step.calls.length === 0)) tx.emit({ type: 'agent_message', text });
  let usage = turn.usage;
  let total = tx.state.usage_total;
  if (step.usage) {
    usage = addUsage(usage, step.usage);
    total = addUsage(total, step.usage);
    // The estimate restarts from what the provider counted (the reply is added below).
    tx.set({ usage_total: total, context: { ...tx.state.context, estimated_tokens: step.usage.input_tokens } });
    tx.emit({ type: 'token_usage', usage: fullUsage(step.usage), total: fullUsage(total) });
  }
  // Arguments past the bounds never reach approval, a tool, an event or the transcript:
  // the call gets an error result saying why.
  // (Optional fields are set after the others, so each object's key order stays as it was.)
  const calls: CallState[] = [];
  const requested: ToolCallRequest[] = [];
  for (const call of step.calls) {
    const refused = toolArgumentsProblem(call.arguments);
    let state: CallState;
    if (refused) {
      state = { call: { ...call, arguments: {} }, started: false, approved: false, started_at: null, refused };
    } else {
      state = { call, started: false, approved: false, started_at: null };
      const approval = approvals[call.tool];
      if (approval) state.approval = approval;
    }
    calls.push(state);
    requested.push(state.call);
  }
  if (!continues) {
    const reply: Extract<ContextItem, { role: 'assistant' }> = { role: 'assistant', text };
    if (requested.length > 0) reply.tool_calls = requested;
    if (step.reasoning && step.reasoning.length > 0) reply.reasoning = step.reasoning;
    tx.append(reply);
  }
  const streak = callStreaks(turn, requested);
  tx.setTurn({
    model_calls: turn.model_calls + 1,
    usage,
    last_message: text && !continues ? text : turn.last_message,
    calls,
    recent_calls: streak.keys,
    recent_streaks: streak.counts,
    output_recoveries: cutOff ? turn.output_recoveries : 0,
    reply_prefix: continues ? text : undefined,
    stop_reason: cutOff && !continues ? 'length' : undefined,
    // The call went through: the next one may compact (and retry an overflow) again.
    compacted_for_call: false,
    overflow_retried: false,
  });
  for (const call of requested) {
    tx.emit({ type: 'tool_call_begin', call_id: call.call_id, tool: call.tool, arguments: call.arguments });
  }
  const threshold = deps.config.limits.doom_loop_threshold;
  if (streak.counts.some((n) => n >= threshold)) {
    return { code: 'doom_loop_detected', message: `the same tool call was repeated in ${threshold} model steps in a row` };
  }
  return null;
}

/**
 * The doom-loop count (docs/tools.md): for each distinct call (tool + arguments) of this
 * step, in how many consecutive steps it was called, this one included. Identical calls
 * within one step count once.
 */
function callStreaks(turn: ActiveTurn, requested: readonly ToolCallRequest[]): { keys: string[]; counts: number[] } {
  const previous = new Map<string, number>();
  turn.recent_calls.forEach((key, i) => previous.set(key, Math.max(previous.get(key) ?? 0, turn.recent_streaks?.[i] ?? 1)));
  // Checkpoints written before streaks existed held one key per call of a run.
  if (!turn.recent_streaks && turn.recent_calls.length > 1) previous.set(turn.recent_calls[0]!, turn.recent_calls.length);
  const keys: string[] = [];
  const counts: number[] = [];
  for (const call of requested) {
    const key = callKey(call);
    if (keys.includes(key)) continue;
    keys.push(key);
    counts.push((previous.get(key) ?? 0) + 1);
  }
  return { keys, counts };
}

/** Give every unfinished tool call a synthetic result (events for those begun, transcript for all). */
function closeOpenCalls(tx: Tx, status: 'interrupted' | 'error', output: string | ((call: CallState) => string)): void {
  const turn = tx.state.turn;
  if (!turn) return;
  for (const c of turn.calls) {
    // A call that already ended (waiting for an earlier one) keeps its own result.
    if (c.ended) appendResult(tx, c, c.ended);
    else endCall(tx, c, { status, output: typeof output === 'string' ? output : output(c) });
  }
  if (turn.approval) {
    tx.emit({ type: 'approval_resolved', approval_id: turn.approval.approval_id, decision: 'abort' });
  }
  tx.setTurn({ calls: [], approval: null });
}

export function completeTurn(tx: Tx): void {
  const turn = tx.turn;
  tx.emit(
    {
      type: 'turn_complete',
      last_message: turn.last_message,
      model_calls: turn.model_calls,
      tool_calls: turn.tool_calls,
      failed_tool_calls: turn.failed_tool_calls,
      usage: turn.usage,
      duration_ms: Math.max(0, tx.now - turn.started_at),
      stop_reason: turn.stop_reason ?? 'end_turn',
    },
    { submission_id: turn.submission_id },
  );
  tx.set({ turn: null });
}

/** End the turn as interrupted: cancel tool calls and approval, tell the model. */
export function interruptTurn(tx: Tx, reason: string, partialText: string, tags = {}): void {
  const turn = tx.state.turn;
  if (!turn) return;
  const partial = (turn.reply_prefix ?? '') + partialText;
  if (partial) tx.append({ role: 'assistant', text: partial });
  closeOpenCalls(tx, 'interrupted', `interrupted: ${reason}`);
  tx.append({ role: 'system', text: INTERRUPTED_NOTE });
  tx.emit({ type: 'turn_interrupted', reason }, { submission_id: turn.submission_id, ...tags });
  tx.set({ turn: null });
}

/** End the turn as failed with a typed error. */
export function failTurn(tx: Tx, code: TurnFailureCode, message: string, partialText = ''): void {
  const turn = tx.state.turn;
  if (!turn) return;
  const partial = (turn.reply_prefix ?? '') + partialText;
  if (partial) tx.append({ role: 'assistant', text: partial });
  // A call that had started did run: its outcome is unknown, not "not run".
  closeOpenCalls(tx, 'error', (c) =>
    c.started ? `the turn failed (${code}: ${message}) while this tool call was running; its outcome is unknown` : `not run: the turn failed (${code})`,
  );
  tx.append({ role: 'system', text: `The previous turn failed: ${code}: ${message}` });
  tx.emit({ type: 'turn_failed', error: { code, message } }, { submission_id: turn.submission_id });
  tx.set({ turn: null });
}
