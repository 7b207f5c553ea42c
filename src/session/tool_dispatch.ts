/**
 * Parallel tool calls (docs/tools.md "Parallel tool calls"), pure: which call of the model
 * step to refuse, start or ask approval for next. Calls that need no approval (or were
 * approved) start at once, at most `limits.max_parallel_tools` running; calls that need
 * approval are asked one at a time in the model's order.
 */
import { callNeedsApproval } from './approval.js';
import type { SessionDeps } from './deps.js';
import type { ActiveTurn, CallState, SessionState } from './state.js';
import { DELEGATE_TOOL } from './subagent.js';
import { finishCall } from './tool_step.js';
import type { Tx } from './tx.js';

/** Neither started nor ended: still to refuse, ask about or start. */
const waiting = (c: CallState): boolean => !c.started && !c.ended;

/** The calls running now (started, no result yet). */
export function runningCalls(turn: ActiveTurn | null): CallState[] {
  return turn ? turn.calls.filter((c) => c.started && !c.ended) : [];
}

/** The first waiting call whose arguments were refused, or -1. */
export function nextRefused(turn: ActiveTurn | null): number {
  return turn ? turn.calls.findIndex((c) => waiting(c) && c.refused !== undefined) : -1;
}

/** The first waiting call that may start now (needs no approval or has it, under the parallel limit), or -1. */
export function nextRunnable(state: SessionState, deps: SessionDeps): number {
  const turn = state.turn;
  if (!turn || runningCalls(turn).length >= deps.config.limits.max_parallel_tools) return -1;
  return turn.calls.findIndex((c) => waiting(c) && c.refused === undefined && !callNeedsApproval(state, deps, c));
}

/** The first waiting call to ask approval for when none is being asked, or -1. */
export function nextToAsk(state: SessionState, deps: SessionDeps): number {
  const turn = state.turn;
  if (!turn || turn.approval) return -1;
  return turn.calls.findIndex((c) => waiting(c) && c.refused === undefined && callNeedsApproval(state, deps, c));
}

/** Give the first waiting refused call its error result. */
export function refuseNext(tx: Tx): void {
  const current = tx.turn.calls[nextRefused(tx.turn)];
  if (current) finishCall(tx, { status: 'error', output: current.refused! }, current.call.call_id);
}

/** Mark the next call that may run started (its child commits that before it runs); its call id. */
export function startNext(tx: Tx, deps: SessionDeps): string | null {
  const index = nextRunnable(tx.state, deps);
  const current = tx.turn.calls[index];
  if (!current) return null;
  const calls = tx.turn.calls.slice();
  calls[index] = { ...current, started: true, started_at: tx.now };
  tx.setTurn({ calls });
  return current.call.call_id;
}

/**
 * After a restart: every started call without a result gets `note` ("outcome unknown") —
 * except a started delegate call, which keeps waiting for its child (recovered as any
 * session): it starts again, finds the same child, and the child's message is admitted once.
 */
export function recoverStartedCalls(tx: Tx, note: string): void {
  for (const current of runningCalls(tx.turn)) {
    if (current.call.tool === DELEGATE_TOOL) {
      tx.setTurn({ calls: tx.turn.calls.map((c) => (c.call.call_id === current.call.call_id ? { ...c, started: false, approved: true } : c)) });
    } else {
      finishCall(tx, { status: 'error', output: note }, current.call.call_id);
    }
  }
}
