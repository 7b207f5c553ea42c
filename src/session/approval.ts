/**
 * Approvals: whether a tool call must wait for an `exec_approval`, asking for
 * it, and applying the decision.
 */
import type { ApprovalDecision } from '../../protocol/index.js';
import type { SessionDeps } from './deps.js';
import type { CallState, SessionState } from './state.js';
import type { ToolCallRequest } from '../model/types.js';
import { shellCommandAllowed, shellCommandOf } from '../tools/shell_allow.js';
import { callKey } from './tool_args.js';
import type { Tx } from './tx.js';

/** Does this call of the active turn wait for approval? */
export function callNeedsApproval(state: SessionState, deps: SessionDeps, current: CallState | undefined): boolean {
  if (!current || current.approved) return false;
  // The mode the tool was offered with (an MCP server's `approval`), else the built-in's.
  const mode = current.approval ?? (deps.tools.get(current.call.tool)?.needsApproval ? 'session' : 'auto');
  if (mode === 'auto' || (mode === 'session' && state.approval_policy !== 'ask')) return false;
  if (isBuiltinShell(current.call.tool, deps)) {
    const command = shellCommandOf(current.call.arguments);
    if (command !== null && shellCommandAllowed(command, [...deps.config.tools.shell.allow, ...(state.shell_allow ?? [])])) return false;
  }
  const approved = state.approved_for_session;
  return !approved.includes(approvalKey(current.call, deps)) && !approved.includes(callKey(current.call));
}

/** The built-in `shell` tool (an MCP tool cannot take a built-in's name: toolbox.ts). */
function isBuiltinShell(tool: string, deps: SessionDeps): boolean {
  return tool === 'shell' && deps.tools.has('shell');
}

/**
 * What `approve_for_session` remembers: for the built-in shell, the exact command (its
 * other arguments may differ); for other tools, the tool and identical arguments.
 */
function approvalKey(call: ToolCallRequest, deps: SessionDeps): string {
  const command = isBuiltinShell(call.tool, deps) ? shellCommandOf(call.arguments) : null;
  return command !== null ? `shell\u0000command\u0000${command}` : callKey(call);
}

/** Ask for approval of the call at `index` of the step's calls. */
export function requestApproval(tx: Tx, deps: SessionDeps, index: number): void {
  const current = tx.turn.calls[index];
  if (!current) return;
  const request = {
    type: 'exec_approval_request' as const,
    approval_id: deps.newId('appr'),
    call_id: current.call.call_id,
    tool: current.call.tool,
    arguments: current.call.arguments,
    cwd: tx.state.cwd,
  };
  tx.setTurn({ approval: request });
  tx.emit(request);
}

/**
 * Apply a decision to the pending approval: resolve it and, when approved, mark the call
 * approved (the chart's transition decides what happens next).
 */
export function resolveApproval(
  tx: Tx,
  deps: SessionDeps,
  decision: ApprovalDecision,
  submissionId: string,
): void {
  const turn = tx.turn;
  const approval = turn.approval!;
  tx.emit({ type: 'approval_resolved', approval_id: approval.approval_id, decision }, { submission_id: submissionId });
  const index = turn.calls.findIndex((c) => c.call.call_id === approval.call_id);
  const current = turn.calls[index];
  tx.setTurn({ approval: null });
  if (decision === 'abort' || decision === 'deny' || !current) return;
  if (decision === 'approve_for_session') {
    tx.set({ approved_for_session: [...tx.state.approved_for_session, approvalKey(current.call, deps)] });
  }
  const calls = turn.calls.slice();
  calls[index] = { ...current, approved: true };
  tx.setTurn({ calls });
}
