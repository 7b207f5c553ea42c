/**
 * Handling of submissions that do not move the turn along: set_model,
 * capability_command, resume_session, and the warnings for interrupt / exec_approval
 * that do not apply.
 */
import { LIMITS, type CapabilityCommandOp, type ResumeSessionOp, type SetModelOp } from '../../protocol/index.js';
import { parseBudget, tokensSpent } from './budget.js';
import { requestCompaction } from './compaction.js';
import type { OtherSession, SessionDeps, ToolListing } from './deps.js';
import { callRoute, effortProblem } from './routing.js';
import { sessionStatus } from './state.js';
import type { Tx } from './tx.js';

export function setModel(tx: Tx, deps: SessionDeps, op: SetModelOp, submissionId: string): void {
  const route = deps.routes.get(op.route);
  if (!route) {
    tx.emit({ type: 'warning', message: `unknown model route "${op.route}"; the model stays "${tx.state.model.route}"` }, { submission_id: submissionId });
    return;
  }
  const effort = op.reasoning_effort ?? null;
  const problem = effort !== null ? effortProblem(route, effort) : null;
  if (problem) {
    tx.emit({ type: 'warning', message: problem }, { submission_id: submissionId });
    return;
  }
  const model = { route: route.route, model: route.model, reasoning_effort: effort, context_window: route.context_window };
  // Another window: the circuit breaker starts over (docs/context.md).
  tx.set({ model, context: { ...tx.state.context, compaction_failures: 0 } });
  tx.emit({ type: 'model_changed', ...model }, { submission_id: submissionId });
}

/** The built-in capability `session`: commands `status`, `title`, `tools` (the listing the pump looked up) and `compact` (during a turn; idle: see compaction.ts). */
export function capabilityCommand(
  tx: Tx,
  deps: SessionDeps,
  op: CapabilityCommandOp,
  submissionId: string,
  headSequence: number,
  tools: ToolListing | null = null,
): void {
  const tags = { submission_id: submissionId };
  if (op.capability !== 'session') {
    tx.emit({ type: 'warning', message: `unknown capability "${op.capability}"` }, tags);
    return;
  }
  const s = tx.state;
  switch (op.command) {
    case 'status':
      tx.emit(
        {
          type: 'capability_output',
          capability: 'session',
          command: 'status',
          output: {
            status: sessionStatus(s),
            model: s.model,
            active_turn_id: s.turn?.turn_id ?? null,
            queued_messages: s.queue.length,
            head_sequence: headSequence,
            usage_total: s.usage_total,
            approval_policy: s.approval_policy,
            cwd: s.cwd,
            title: s.title,
            context: {
              estimated_tokens: s.context.estimated_tokens,
              context_window: callRoute(s, deps).context_window,
              items: s.context.items,
              compaction_failures: s.context.compaction_failures,
            },
            system_prompt_bytes: s.system_prompt === null ? 0 : Buffer.byteLength(s.system_prompt, 'utf8'),
            token_budget: s.token_budget ?? null,
            tokens_used: tokensSpent(s),
          },
        },
        tags,
      );
      return;
    case 'title': {
      const raw = op.input ?? (op.arguments as { title?: unknown } | undefined)?.title;
      if (raw !== undefined && (typeof raw !== 'string' || raw.length > LIMITS.titleMaxChars)) {
        tx.emit({ type: 'warning', message: `session title: input must be a string of at most ${LIMITS.titleMaxChars} characters` }, tags);
        return;
      }
      if (typeof raw === 'string') tx.set({ title: raw.trim() || null });
      tx.emit({ type: 'capability_output', capability: 'session', command: 'title', output: { title: tx.state.title } }, tags);
      return;
    }
    case 'tools':
      tx.emit({ type: 'capability_output', capability: 'session', command: 'tools', output: tools ?? { tools: [], mcp_servers: [] } }, tags);
      return;
    case 'compact':
      requestCompaction(tx, submissionId);
      return;
    case 'budget': {
      const parsed = parseBudget(op.arguments, op.input);
      if ('problem' in parsed) {
        tx.emit({ type: 'warning', message: parsed.problem }, tags);
        return;
      }
      tx.set({ token_budget: parsed.tokens });
      tx.emit(
        { type: 'capability_output', capability: 'session', command: 'budget', output: { token_budget: parsed.tokens, tokens_used: tokensSpent(tx.state) } },
        tags,
      );
      return;
    }
    default:
      tx.emit({ type: 'warning', message: `unknown command "${op.command}" for capability "session" (commands: status, title, tools, compact, budget)` }, tags);
  }
}

/** `other` is the requested session's descriptor summary, looked up by the pump (null: none or invalid). */
export function resumeSession(tx: Tx, other: OtherSession | null, op: ResumeSessionOp, submissionId: string): void {
  if (!other) {
    tx.emit({ type: 'warning', message: `cannot resume session "${op.session_id}": no valid checkpoint` }, { submission_id: submissionId });
    return;
  }
  tx.emit(
    {
      type: 'session_resume_requested',
      session_id: op.session_id,
      context: other,
    },
    { submission_id: submissionId },
  );
}

/** Warnings for ops that find nothing to act on. */
export function warnInterrupt(tx: Tx, turnId: string, submissionId: string): void {
  const active = tx.state.turn?.turn_id;
  tx.emit(
    {
      type: 'warning',
      message: active ? `turn "${turnId}" is not the active turn (active: "${active}")` : 'no active turn to interrupt',
    },
    { submission_id: submissionId },
  );
}

export function warnApproval(tx: Tx, approvalId: string, submissionId: string): void {
  const pending = tx.state.turn?.approval?.approval_id;
  tx.emit(
    {
      type: 'warning',
      message: pending ? `approval "${approvalId}" is not the pending one (pending: "${pending}")` : 'no approval request is active',
    },
    { submission_id: submissionId },
  );
}
