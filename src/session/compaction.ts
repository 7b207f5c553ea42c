/**
 * Compaction (docs/context.md): when it is due (automatic at the threshold, manual,
 * after an overflow error), the child actor that runs the summarization call, and the
 * transitions that record its outcome — a compaction marker in the transcript, a
 * `context_compacted` event, the new estimate — or count a failure for the circuit
 * breaker. The journal keeps every original event; only the model's view shrinks.
 */
import { fromCallback } from 'xstate';
import type { CompactionReason, TokenUsage, TurnFailureCode } from '../../protocol/index.js';
import { ModelError, type ModelChunk } from '../model/types.js';
import { baseTokens, itemTokens, keepBudget, planCompaction, summarizationContext, summaryItem, type CompactionPlan } from './context.js';
import type { SessionDeps, SessionPorts } from './deps.js';
import { clientOf, requestOn } from './model_request.js';
import { callRoute } from './routing.js';
import { addUsage, fullUsage, newTurn, type SessionState } from './state.js';
import { failTurn } from './turn.js';
import type { Tx } from './tx.js';

/** A finished summarization: what to record. Null outcome: nothing older to summarize. */
export interface CompactionOutcome extends CompactionPlan {
  summary: string;
  tokens_after: number;
  usage: TokenUsage | null;
}

export type CompactionEvent =
  | { type: 'compact.done'; outcome: CompactionOutcome | null }
  | { type: 'compact.failed'; code: TurnFailureCode; message: string };

// ---- when (pure: guards call these with the chart's context) ----

/** The circuit breaker is open: this many compactions failed in a row. */
export function breakerOpen(state: SessionState, deps: SessionDeps): boolean {
  return state.context.compaction_failures >= deps.config.compaction.max_failures;
}

/** The reason to compact before the next model call, or null. */
export function compactionDue(state: SessionState, deps: SessionDeps): CompactionReason | null {
  const turn = state.turn;
  if (!turn) return null;
  if (turn.compaction) return turn.compaction;
  if (turn.compacted_for_call || breakerOpen(state, deps) || state.context.items === 0) return null;
  const window = callRoute(state, deps).context_window;
  if (window === null) return null;
  return state.context.estimated_tokens > deps.config.compaction.threshold * window ? 'auto' : null;
}

/** The next call cannot fit and compaction will not be tried again. */
export function contextExceeded(state: SessionState, deps: SessionDeps): boolean {
  const window = callRoute(state, deps).context_window;
  return window !== null && breakerOpen(state, deps) && state.context.estimated_tokens > window;
}

/** A provider overflow error that gets one compaction and one retry. */
export function overflowRetries(state: SessionState, deps: SessionDeps): boolean {
  return !state.turn?.overflow_retried && !breakerOpen(state, deps);
}

// ---- asking for one ----

/** `session compact` while a turn runs (or between turns): compact before the next model call. */
export function requestCompaction(tx: Tx, submissionId: string): void {
  const tags = { submission_id: submissionId };
  if (tx.state.context.items === 0) {
    tx.emit({ type: 'warning', message: 'nothing to compact: the transcript is empty' }, tags);
    return;
  }
  if (tx.state.turn) tx.setTurn({ compaction: 'manual' });
  else tx.set({ compaction_requested: submissionId });
  tx.emit({ type: 'capability_output', capability: 'session', command: 'compact', output: { scheduled: 'before the next model call' } }, tags);
}

/** Idle: a manual compaction runs as a turn of its own, which the submission starts. */
export function startCompactionTurn(tx: Tx, deps: SessionDeps, submissionId: string | null): void {
  const turn = newTurn(deps.newId('turn'), submissionId, tx.now, { compact_only: true, compaction: 'manual' });
  tx.set({ turn, compaction_requested: null });
  tx.emit({ type: 'turn_started', turn_id: turn.turn_id }, { submission_id: submissionId });
}

/** A compaction asked for between turns joins the turn that starts now. */
export function takeRequestedCompaction(tx: Tx): void {
  if (!tx.state.compaction_requested || !tx.state.turn) return;
  tx.set({ compaction_requested: null });
  tx.setTurn({ compaction: 'manual' });
}

/** The model call overflowed the window: compact, then retry it once. */
export function compactAfterOverflow(tx: Tx): void {
  tx.setTurn({ compaction: 'overflow', overflow_retried: true, compacted_for_call: false });
}

// ---- recording the outcome ----

/** Usage of the summarization call: counted for the turn and the session. */
function recordUsage(tx: Tx, usage: TokenUsage): void {
  const total = addUsage(tx.state.usage_total, usage);
  tx.set({ usage_total: total });
  tx.setTurn({ usage: addUsage(tx.turn.usage, usage) });
  tx.emit({ type: 'token_usage', usage: fullUsage(usage), total: fullUsage(total) });
}

export function recordCompaction(tx: Tx, reason: CompactionReason, outcome: CompactionOutcome | null): void {
  tx.setTurn({ compaction: null, compacted_for_call: true });
  if (!outcome) {
    if (reason !== 'auto') tx.emit({ type: 'warning', message: `compaction (${reason}): nothing older to summarize` });
    return;
  }
  if (outcome.usage) recordUsage(tx, outcome.usage);
  const before = tx.state.context;
  tx.append({ role: 'compaction', summary: outcome.summary, keep_from: outcome.keep_from });
  tx.set({ context: { estimated_tokens: outcome.tokens_after, items: outcome.items_after, compaction_failures: 0 } });
  tx.emit({
    type: 'context_compacted',
    reason,
    items_before: outcome.items_before,
    items_after: outcome.items_after,
    tokens_before: before.estimated_tokens,
    tokens_after: outcome.tokens_after,
    summary: outcome.summary,
  });
}

/** A failed summarization: counted for the breaker; a compaction-only turn fails with the call's code. */
export function compactionFailed(tx: Tx, deps: SessionDeps, reason: CompactionReason, code: TurnFailureCode, message: string): void {
  const failures = tx.state.context.compaction_failures + 1;
  tx.set({ context: { ...tx.state.context, compaction_failures: failures } });
  tx.setTurn({ compaction: null, compacted_for_call: true });
  const max = deps.config.compaction.max_failures;
  const breaker = failures >= max ? `; ${failures} failures in a row: automatic compaction is off until one succeeds (compaction.max_failures)` : '';
  tx.emit({ type: 'warning', message: `context compaction (${reason}) failed: ${code}: ${message}${breaker}` });
  if (tx.turn.compact_only) failTurn(tx, code, `the compaction failed: ${message}`);
}

export function failContextExceeded(tx: Tx, deps: SessionDeps, detail: string): void {
  const window = callRoute(tx.state, deps).context_window;
  failTurn(
    tx,
    'context_window_exceeded',
    `${detail} (estimate ${tx.state.context.estimated_tokens} tokens, window ${window ?? 'unknown'}); compact the session (session compact) or switch to a route with a larger window`,
  );
}

// ---- the summarization call ----

export interface CompactStepInput {
  reason: CompactionReason;
  /** Reads the transcript and builds the plan and the request when the call starts. */
  prepare(): { plan: CompactionPlan; base: number; run: (signal: AbortSignal) => AsyncIterable<ModelChunk> } | null;
  idleTimeoutMs: number;
}

/** The input of the compaction child actor (the route: `compaction.route`, else the call's). */
export function compactStepInput(state: SessionState, deps: SessionDeps, ports: SessionPorts): CompactStepInput {
  const reason = state.turn?.compaction ?? 'auto';
  const call = callRoute(state, deps);
  const named = deps.config.compaction.route;
  const route = named !== undefined ? { name: named, resolved: deps.routes.get(named) ?? null, reasoning_effort: null } : { name: call.route, resolved: call.resolved, reasoning_effort: call.reasoning_effort };
  // After an overflow the real request is larger than the window, whatever the estimate says:
  // keep at most a quarter of the smaller of the two, so the retry is smaller for sure.
  const estimate = state.context.estimated_tokens;
  const window = reason === 'overflow' ? Math.min(call.context_window ?? estimate, estimate) : call.context_window;
  const keep = keepBudget(deps.config.compaction.keep_recent_tokens, window);
  return {
    reason,
    idleTimeoutMs: deps.config.limits.model_idle_timeout_ms,
    prepare: () => {
      const plan = planCompaction(ports.context(), reason, keep);
      if (!plan) return null;
      const request = requestOn(state, deps, route, summarizationContext(plan.older));
      // The estimate after: what the session's own next call sends besides the transcript, the summary, the kept items.
      const next = requestOn(state, deps, { name: call.route, resolved: call.resolved, reasoning_effort: null }, []);
      const client = clientOf(deps, route.name, route.resolved);
      return { plan, base: baseTokens(next.system ?? '', next.tools), run: (signal) => client.stream({ ...request, signal }) };
    },
  };
}

export const compactStep = fromCallback<CompactionEvent, CompactStepInput>(({ input, sendBack }) => {
  const controller = new AbortController();
  let lastChunkAt = Date.now();
  let timedOut = false;
  const idle = setInterval(() => {
    if (Date.now() - lastChunkAt >= input.idleTimeoutMs) {
      timedOut = true;
      controller.abort();
    }
  }, Math.min(1000, input.idleTimeoutMs));
  const run = async (): Promise<CompactionEvent | null> => {
    const prepared = input.prepare();
    if (!prepared) return { type: 'compact.done', outcome: null };
    let summary = '';
    let usage: TokenUsage | null = null;
    for await (const chunk of prepared.run(controller.signal)) {
      lastChunkAt = Date.now();
      if (chunk.type === 'text_delta') summary += chunk.delta;
      else if (chunk.type === 'usage') usage = { input_tokens: chunk.input_tokens, output_tokens: chunk.output_tokens };
    }
    if (controller.signal.aborted && !timedOut) return null;
    if (timedOut) throw new ModelError('model_idle_timeout', `the summarization stream sent nothing for ${input.idleTimeoutMs} ms`);
    summary = summary.trim();
    if (!summary) throw new ModelError('model_error', 'the summarization call returned no text');
    const { plan, base } = prepared;
    const tokens_after = base + itemTokens(summaryItem(summary)) + plan.kept_tokens;
    return { type: 'compact.done', outcome: { ...plan, summary, tokens_after, usage } };
  };
  let finished = false;
  queueMicrotask(() => {
    run()
      .then((event) => {
        finished = true;
        if (event && !controller.signal.aborted) sendBack(event);
      })
      .catch((err: unknown) => {
        finished = true;
        if (controller.signal.aborted && !timedOut) return;
        const code: TurnFailureCode = timedOut ? 'model_idle_timeout' : err instanceof ModelError ? err.code : 'model_error';
        sendBack({ type: 'compact.failed', code, message: (err as Error)?.message ?? String(err) });
      })
      .finally(() => clearInterval(idle));
  });
  return () => {
    clearInterval(idle);
    if (!finished) controller.abort();
  };
});
