/**
 * The session's token budget (docs/tools.md "Token budget"): input + output tokens of every
 * model call, summaries included, counted in `usage_total`. Once the total reaches the
 * budget the next model call fails its turn with `budget_exceeded`; `session budget`
 * sets a new one. Pure functions over the state and a Tx.
 */
import { TokenBudgetSchema } from '../../protocol/index.js';
import type { SessionState } from './state.js';
import { failTurn } from './turn.js';
import type { Tx } from './tx.js';

/** Tokens the session has spent: input + output of every model call. */
export function tokensSpent(state: SessionState): number {
  return state.usage_total.input_tokens + state.usage_total.output_tokens;
}

/** Whether the session's budget is spent (no budget: never). */
export function budgetSpent(state: SessionState): boolean {
  const budget = state.token_budget ?? null;
  return budget !== null && tokensSpent(state) >= budget;
}

/** Fail the turn before a model call whose budget is spent. */
export function failBudget(tx: Tx): void {
  const budget = tx.state.token_budget ?? 0;
  failTurn(
    tx,
    'budget_exceeded',
    `the session's token budget (${budget} tokens) is spent (${tokensSpent(tx.state)} used); raise it with the session command "budget"`,
  );
}

/**
 * `session budget {tokens}`: the new budget (a positive integer, or null for none), or a
 * problem to warn about. `input` is the command's text form (`/budget 50000`).
 */
export function parseBudget(args: unknown, input: unknown): { tokens: number | null } | { problem: string } {
  const raw = typeof input === 'string' ? input.trim() : input !== undefined ? input : (args as { tokens?: unknown } | undefined)?.tokens;
  if (raw === null || raw === 'none' || raw === 'off') return { tokens: null };
  const value = typeof raw === 'string' && /^\d+$/.test(raw) ? Number(raw) : raw;
  const parsed = TokenBudgetSchema.safeParse(value);
  if (!parsed.success) return { problem: 'session budget: arguments.tokens must be a positive integer (or null for no budget)' };
  return { tokens: parsed.data };
}
