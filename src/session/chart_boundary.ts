/**
 * The chart's step boundary (between a tool step and the next model call): what follows
 * it, and the clear boundary — a tool result handed over with nothing waiting in the inbox,
 * which has nothing to hand over at a cutoff and so goes on at once. Transition lists and
 * guards for machine.ts; pure like the rest of the chart (guards read context and event).
 */
import type { SessionContext, SessionEvent } from './chart_types.js';
import { budgetSpent } from './budget.js';
import { contextGuards } from './chart_context.js';

/**
 * What happens before each model call (turn.preparing), in order: compact when due, end a
 * compaction-only turn, fail a call that cannot fit, else sample. Targets are turn's states.
 */
export const BEFORE_MODEL_CALL = [
  // A summary is a model call too: the budget is checked before either (docs/tools.md).
  { guard: 'budgetSpent', target: '#session.draining', actions: 'failBudget' },
  { guard: 'compactionDue', target: 'compacting', actions: 'beginCompaction' },
  { guard: 'compactOnlyDone', target: '#session.draining', actions: 'complete' },
  { guard: 'contextExceeded', target: '#session.draining', actions: 'failContextExceeded' },
  { target: 'sampling' },
] as const;

/**
 * Past a step boundary's cutoff, in order: the max_model_steps limit; steers admitted so far
 * joining the next call (through `preparing`); else what `preparing` decides (the same
 * guards: with no steer to drain the state is the one `preparing` would see).
 */
export const PAST_STEP_BOUNDARY = [
  { guard: 'maxStepsReached', target: '#session.draining', actions: 'failMaxSteps' },
  { guard: 'hasSteer', target: 'preparing', actions: 'drainSteer' },
  ...BEFORE_MODEL_CALL,
] as const;

/**
 * The same, from `turn.tools` after a tool result that came with nothing waiting in the
 * inbox (a clear step boundary): there is nothing to hand over at a cutoff, so it goes on
 * at once, without the cutoff's round trip through the pump.
 */
export const PAST_CLEAR_STEP_BOUNDARY = PAST_STEP_BOUNDARY.map((t) => ({
  ...t,
  guard: 'guard' in t ? ({ type: 'clearStepBoundary', params: t.guard } as const) : ('clearStepBoundary' as const),
}));

interface GuardArgs {
  context: SessionContext;
  event: SessionEvent;
}

const noCalls = ({ context }: GuardArgs) => (context.state.turn?.calls.length ?? 0) === 0;
const hasSteer = ({ context }: GuardArgs) => (context.state.turn?.steer.length ?? 0) > 0;
const maxStepsReached = ({ context }: GuardArgs) =>
  (context.state.turn?.model_calls ?? 0) >= context.deps.config.limits.max_model_steps;

const budgetIsSpent = ({ context }: GuardArgs) => budgetSpent(context.state);

/** The guards of PAST_STEP_BOUNDARY, by name. */
const pastBoundary = {
  maxStepsReached,
  hasSteer,
  budgetSpent: budgetIsSpent,
  compactionDue: contextGuards.compactionDue,
  compactOnlyDone: contextGuards.compactOnlyDone,
  contextExceeded: contextGuards.contextExceeded,
};

export const boundaryGuards = {
  noCalls,
  hasSteer,
  maxStepsReached,
  budgetSpent: budgetIsSpent,
  /**
   * No call left, and the tool result this macrostep started from came with nothing waiting
   * in the inbox — and the guard of PAST_STEP_BOUNDARY named by `also`, if any, holds.
   */
  clearStepBoundary: (args: GuardArgs, also: keyof typeof pastBoundary | undefined) =>
    noCalls(args) &&
    args.event.type === 'tool.done' &&
    args.event.inboxEmpty === true &&
    (also === undefined || pastBoundary[also](args)),
};
