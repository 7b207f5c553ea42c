/**
 * Running one tool call: the child actor that runs it (streaming its output back to the
 * session actor) and the transitions that record its start and its result.
 */
import { fromCallback } from 'xstate';
import type { ExecOutputDeltaMsg, ToolCallStatus } from '../../protocol/index.js';
import type { ToolCallRequest } from '../model/types.js';
import type { ToolResult } from '../tools/types.js';
import { Coalescer } from './coalescer.js';
import { cutToolOutput, type TranscriptItem } from './context.js';
import type { SessionPorts } from './deps.js';
import type { CallState, EndedCall } from './state.js';
import type { Tx } from './tx.js';

export interface ToolRunInput {
  call: ToolCallRequest;
  cwd: string;
  /** The session's id (given to the tool: MCP requests carry the call's trace context). */
  sessionId?: string;
  /**
   * The session's ports: `tool` finds the tool the call names (built-in, delegate or MCP)
   * when it runs; `commitStart` commits the "started" checkpoint before anything runs (no
   * silent re-run after a crash); `inboxEmpty` — no submission waits in the session's inbox
   * (looked up as the result is handed over).
   */
  ports: Pick<SessionPorts, 'tool' | 'commitStart' | 'inboxEmpty'>;
}

/**
 * What a tool-run child sends back; `call_id` names its call (absent: the first running
 * call — a single call, as the chart tests write it).
 */
export type ToolEvent =
  | { type: 'tool.output'; call_id?: string; chunks: Array<Pick<ExecOutputDeltaMsg, 'stream' | 'chunk'>> }
  | { type: 'tool.subagent'; call_id?: string; child_session_id: string }
  /**
   * The call's result. `inboxEmpty`: nothing waited in the inbox when it was handed over, so
   * a step boundary after it has nothing to hand over at its cutoff (absent: not known).
   */
  | { type: 'tool.done'; call_id?: string; result: ToolResult; inboxEmpty?: boolean };

/** The id of the child actor running a call (one per running call: docs/tools.md "Parallel tool calls"). */
export const toolActorId = (callId: string): string => `tool:${callId}`;

/** Child actor: runs the tool; stopping the actor aborts it (the shell kills its process group). */
export const toolRun = fromCallback<ToolEvent, ToolRunInput>(({ input, sendBack }) => {
  const call_id = input.call.call_id;
  const controller = new AbortController();
  let finished = false;
  const output = new Coalescer<Pick<ExecOutputDeltaMsg, 'stream' | 'chunk'>>(
    (chunks) => sendBack({ type: 'tool.output', call_id, chunks }),
    setImmediate,
    controller.signal,
  );
  const flushOutput = () => output.flush();
  const run = async (): Promise<ToolResult> => {
    const found = input.ports.tool(input.call.tool);
    const tool = found instanceof Promise ? await found : found;
    if (controller.signal.aborted) return { status: 'error', output: 'interrupted' };
    if (!tool) return { status: 'error', output: `unknown tool "${input.call.tool}"` };
    // The start is durable before anything runs; the tool waits for its commit (a promise), nothing else does.
    if (!(await input.ports.commitStart())) return { status: 'error', output: 'not run: the journal could not record the start' };
    if (controller.signal.aborted) return { status: 'error', output: 'interrupted' };
    return tool.run(input.call.arguments, {
      cwd: input.cwd,
      signal: controller.signal,
      onOutput(stream, chunk) {
        output.push({ stream, chunk });
      },
      callId: input.call.call_id,
      ...(input.sessionId !== undefined && { sessionId: input.sessionId }),
      onSubagent(child_session_id) {
        if (!controller.signal.aborted) sendBack({ type: 'tool.subagent', call_id, child_session_id });
      },
    });
  };
  // Start once the session actor has finished entering its state (a microtask later).
  let cancelled = false;
  queueMicrotask(() => {
    if (cancelled) return;
    run()
      .catch((err: unknown): ToolResult => ({ status: 'error', output: `tool failed: ${(err as Error).message}` }))
      .then((result) => {
        if (controller.signal.aborted) return;
        flushOutput();
        finished = true;
        sendBack({ type: 'tool.done', call_id, result, inboxEmpty: input.ports.inboxEmpty() });
      });
  });
  return () => {
    cancelled = true;
    if (!finished) controller.abort();
  };
});

/** What a tool call ended with. */
export interface CallResult {
  status: ToolCallStatus;
  output: string;
  exit_code?: number;
  /** A `delegate` call: how its child's turn ended. */
  subagent?: ToolResult['subagent'];
}

/** End one call: its `tool_call_end` event (and `subagent_finished` for a delegate call's child). */
export function emitCallEnd(tx: Tx, current: CallState, result: CallResult): void {
  // A delegate call's child: how it ended (closing an unfinished call: as this call ended).
  const child = result.subagent?.child_session_id ?? current.child_session_id;
  if (child) {
    const status = result.subagent?.status ?? (result.status === 'interrupted' ? 'interrupted' : 'failed');
    tx.emit({ type: 'subagent_finished', call_id: current.call.call_id, child_session_id: child, status });
  }
  tx.emit({
    type: 'tool_call_end',
    call_id: current.call.call_id,
    status: result.status,
    output: result.output,
    exit_code: result.exit_code ?? null,
    duration_ms: current.started_at ? Math.max(0, tx.now - current.started_at) : 0,
  });
}

/** A call's result as it joins the model context (at most 64 KiB of it; the event keeps it whole: docs/context.md). */
function heldResult(result: CallResult): EndedCall {
  const held: EndedCall = { output: cutToolOutput(result.output) };
  if (result.exit_code !== undefined) held.exit_code = result.exit_code;
  return held;
}

/** Append a call's result to the transcript. */
export function appendResult(tx: Tx, current: CallState, held: EndedCall): void {
  const item: Extract<TranscriptItem, { role: 'tool' }> = {
    role: 'tool',
    call_id: current.call.call_id,
    tool: current.call.tool,
    output: held.output,
  };
  if (held.exit_code !== undefined) item.exit_code = held.exit_code;
  tx.append(item);
}

/** End one call at once: its events and its result in the model context. */
export function endCall(tx: Tx, current: CallState, result: CallResult): void {
  emitCallEnd(tx, current, result);
  appendResult(tx, current, heldResult(result));
}

/** The index of the call `callId` names (absent: the first started call still running). */
export function callIndex(calls: readonly CallState[], callId: string | undefined): number {
  return callId === undefined ? calls.findIndex((c) => c.started && !c.ended) : calls.findIndex((c) => c.call.call_id === callId);
}

/**
 * Record a call's result (the first running call's when `callId` is absent): its end
 * events now, its result in the transcript once every earlier call of the step has one.
 */
export function finishCall(tx: Tx, result: CallResult, callId?: string): void {
  const turn = tx.turn;
  const index = callIndex(turn.calls, callId);
  const current = turn.calls[index];
  if (!current || current.ended) return;
  emitCallEnd(tx, current, result);
  const calls = turn.calls.slice();
  calls[index] = { ...current, ended: heldResult(result) };
  // Results join the transcript in the model's order: every leading ended call now.
  let first = 0;
  while (calls[first]?.ended) {
    appendResult(tx, calls[first]!, calls[first]!.ended!);
    first += 1;
  }
  tx.setTurn({
    calls: calls.slice(first),
    tool_calls: turn.tool_calls + 1,
    failed_tool_calls: turn.failed_tool_calls + (result.status !== 'ok' ? 1 : 0),
  });
}

/** A delegate call started (or, run again after a restart, found) its child: `subagent_started`, once. */
export function recordSubagent(tx: Tx, childSessionId: string, callId?: string): void {
  const index = callIndex(tx.turn.calls, callId);
  const current = tx.turn.calls[index];
  if (!current || current.child_session_id === childSessionId) return;
  tx.emit({ type: 'subagent_started', call_id: current.call.call_id, child_session_id: childSessionId });
  const calls = tx.turn.calls.slice();
  calls[index] = { ...current, child_session_id: childSessionId };
  tx.setTurn({ calls });
}
