/**
 * Which route and reasoning effort a model call uses (docs/models.md): the session's
 * own, or the per-message `overrides` of the running turn; checking overrides when a
 * turn starts; and falling back to the default route at hydration when the saved one is
 * no longer configured.
 */
import type { MessageOverrides } from '../../protocol/index.js';
import type { ModelRoute } from '../model/types.js';
import type { SessionDeps } from './deps.js';
import type { SessionState } from './state.js';
import type { Tx } from './tx.js';

/** The route name and effort of the next model call. */
export interface CallRoute {
  route: string;
  reasoning_effort: string | null;
  /** Null when the route is not configured. */
  resolved: ModelRoute | null;
  context_window: number | null;
}

/** The route of the next model call: the turn's override, else the session's route. */
export function callRoute(state: SessionState, deps: SessionDeps): CallRoute {
  const o = state.turn?.overrides;
  const route = o?.route ?? state.model.route;
  // An override of the route alone drops the session's effort (it may not exist there).
  const effort = o?.reasoning_effort ?? (o?.route !== undefined && o.route !== state.model.route ? null : state.model.reasoning_effort);
  const resolved = deps.routes.get(route) ?? null;
  return { route, reasoning_effort: effort, resolved, context_window: resolved ? resolved.context_window : state.model.context_window };
}

/** Does `route` offer `effort`? A route that lists no efforts takes any. */
export function effortProblem(route: ModelRoute, effort: string): string | null {
  if (!route.reasoning_efforts || route.reasoning_efforts.includes(effort)) return null;
  return `route "${route.route}" does not offer reasoning effort "${effort}" (offers: ${route.reasoning_efforts.join(', ')})`;
}

/**
 * The overrides a turn can run with: those that name a configured route and an effort it
 * offers. What cannot apply is left out with a warning (the turn still runs).
 */
export function applicableOverrides(
  tx: Tx,
  deps: SessionDeps,
  overrides: MessageOverrides | undefined,
  submissionId: string | null,
): MessageOverrides | undefined {
  if (!overrides || (overrides.route === undefined && overrides.reasoning_effort === undefined)) return undefined;
  const tags = { submission_id: submissionId };
  const out: MessageOverrides = {};
  let route = deps.routes.get(tx.state.model.route);
  if (overrides.route !== undefined) {
    const named = deps.routes.get(overrides.route);
    if (!named) {
      tx.emit({ type: 'warning', message: `overrides.route: unknown model route "${overrides.route}"; this turn uses "${tx.state.model.route}"` }, tags);
    } else {
      out.route = overrides.route;
      route = named;
    }
  }
  if (overrides.reasoning_effort !== undefined) {
    const problem = route ? effortProblem(route, overrides.reasoning_effort) : null;
    if (problem) tx.emit({ type: 'warning', message: `overrides.reasoning_effort: ${problem}; ignored for this turn` }, tags);
    else out.reasoning_effort = overrides.reasoning_effort;
  }
  return out.route !== undefined || out.reasoning_effort !== undefined ? out : undefined;
}

/** Is the saved route gone from the configuration while the default route exists? */
export function routeMissing(state: SessionState, deps: SessionDeps): boolean {
  return !deps.routes.has(state.model.route) && deps.routes.has(deps.config.models.default);
}

/** Hydration: a saved route no longer configured falls back to the default (`model_changed` + `warning`). */
export function fallBackToDefaultRoute(tx: Tx, deps: SessionDeps): void {
  if (!routeMissing(tx.state, deps)) return;
  const missing = tx.state.model.route;
  const route = deps.routes.get(deps.config.models.default)!;
  const model = { route: route.route, model: route.model, reasoning_effort: null, context_window: route.context_window };
  tx.set({ model });
  tx.emit({ type: 'model_changed', ...model }, { submission_id: null, turn_id: null });
  tx.emit(
    { type: 'warning', message: `model route "${missing}" is no longer configured; the session now uses the default route "${route.route}"` },
    { submission_id: null, turn_id: null },
  );
}
