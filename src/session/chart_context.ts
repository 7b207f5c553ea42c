/**
 * The chart's guards and actions for what the model sees (docs/context.md–11): when to
 * compact, recording a compaction or its failure, the circuit breaker and overflow
 * retry, manual compaction turns, and the default-route fallback at hydration. Pure
 * like the rest of the chart: guards read the context and the event, actions build a Tx.
 */
import type { SessionContext, SessionEvent } from './chart_types.js';
import { change, op, sub, type Ev } from './chart_change.js';
import {
  breakerOpen,
  compactAfterOverflow,
  compactionDue,
  compactionFailed,
  contextExceeded,
  failContextExceeded,
  overflowRetries,
  recordCompaction,
  startCompactionTurn,
} from './compaction.js';
import { fallBackToDefaultRoute } from './routing.js';

interface Args {
  context: SessionContext;
  event: SessionEvent;
}

export const contextGuards = {
  isCompactCommand: ({ event }: Args) => {
    const o = op(event);
    return o.type === 'capability_command' && o.capability === 'session' && o.command === 'compact';
  },
  hasContext: ({ context }: Args) => context.state.context.items > 0,
  compactionRequested: ({ context }: Args) => !!context.state.compaction_requested,
  compactionDue: ({ context }: Args) => compactionDue(context.state, context.deps) !== null,
  compactOnlyDone: ({ context }: Args) => !!context.state.turn?.compact_only && !context.state.turn.compaction,
  contextExceeded: ({ context }: Args) => contextExceeded(context.state, context.deps),
  isOverflow: ({ event }: Args) => (event as Ev<'model.failed'>).code === 'context_overflow',
  overflowRetries: ({ context }: Args) => overflowRetries(context.state, context.deps),
  compactOnly: ({ context }: Args) => !!context.state.turn?.compact_only,
};

export const contextActions = {
  fallbackRoute: change((tx, ctx) => fallBackToDefaultRoute(tx, ctx.deps)),
  startCompactionTurn: change((tx, ctx, event) =>
    startCompactionTurn(tx, ctx.deps, event.type === 'submission' ? sub(event).item.submission.id : (tx.state.compaction_requested ?? null)),
  ),
  beginCompaction: change((tx) => {
    tx.setTurn({ compacted_for_call: true });
  }),
  recordCompaction: change((tx, ctx, event: Ev<'compact.done'>) =>
    recordCompaction(tx, compactionDue(ctx.state, ctx.deps) ?? 'auto', event.outcome),
  ),
  compactionFailed: change((tx, ctx, event: Ev<'compact.failed'>) =>
    compactionFailed(tx, ctx.deps, compactionDue(ctx.state, ctx.deps) ?? 'auto', event.code, event.message),
  ),
  compactAfterOverflow: change((tx) => compactAfterOverflow(tx)),
  failOverflow: change((tx, ctx, event: Ev<'model.failed'>) =>
    failContextExceeded(
      tx,
      ctx.deps,
      breakerOpen(ctx.state, ctx.deps)
        ? `the model call does not fit the context window and compaction is off after repeated failures: ${event.message}`
        : `the model call still does not fit the context window after compaction: ${event.message}`,
    ),
  ),
  failContextExceeded: change((tx, ctx) =>
    failContextExceeded(tx, ctx.deps, 'the next model call does not fit the context window and compaction is off after repeated failures'),
  ),
};
