/**
 * Parallel tool calls (docs/tools.md "Parallel tool calls"), pure: which call of the model
 * step to refuse, start or ask approval for next. Calls that need no approval (or were
 * approved) start at once, at most `limits.max_parallel_tools` running; calls that need
 * approval are asked one at a time in the model's order.
 */
import { callNeedsApproval } from './approval.js';
import type { SessionDeps } from './deps.js';
import type { ActiveTurn, CallState, SessionState } from './state.js';

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
