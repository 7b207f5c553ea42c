/**
 * What the model is sent: the request of one model call (route, effort, context, tools)
 * and the runtime's notes to the model. Kept out of the statechart.
 */
import { ModelError, type ContextItem, type ModelClient, type ModelRequest, type ModelRoute } from '../model/types.js';
import type { SessionDeps, SessionPorts } from './deps.js';
import type { ModelStepInput } from './model_step.js';
import { callRoute } from './routing.js';
import type { SessionState } from './state.js';
import { systemPromptFor } from './system_prompt.js';

/** The result given to a tool call that was running when the daemon restarted. */
export const RESTART_NOTE = 'the daemon restarted while this tool call was running; its outcome is unknown and it was not run again';

/** Told to the model when its reply was cut off by the output length limit. */
export const LENGTH_CONTINUATION_NOTE = 'Your reply was cut off by the output length limit. Continue exactly where it stopped.';

/**
 * The context of a continuation after a length stop: the reply so far and the note asking
 * to continue it (neither is in the transcript: the whole reply goes there once it ends).
 */
export function withReplySoFar(context: ContextItem[], replySoFar: string | undefined): ContextItem[] {
  if (replySoFar === undefined) return context;
  return [...context, { role: 'assistant', text: replySoFar }, { role: 'system', text: LENGTH_CONTINUATION_NOTE }];
}

/** The result given to a tool call that was running when the journal stopped accepting commits. */
export function journalFailureNote(message: string): string {
  return `the session paused while this tool call was running (${message}); its outcome is unknown and it was not run again`;
}

export function unknownRouteClient(route: string): ModelClient {
  return {
    async *stream() {
      throw new ModelError('unknown_route', `model route "${route}" is not configured`);
    },
  };
}

/** The system prompt of a call on `route` for this session (docs/context.md). */
export function sessionSystemPrompt(state: SessionState, deps: SessionDeps, route: ModelRoute | undefined, now = Date.now()): string {
  return systemPromptFor(state.system_prompt, route, deps.config, state.cwd, [...deps.tools.keys()], now);
}

/** The route a call names, as the request carries it. */
type CallOn = { name: string; resolved: ModelRoute | null; reasoning_effort: string | null };

/** The request of a call on `route` with `context`, without its tools (a turn's step: they come from the offer). */
function requestWithoutTools(
  state: SessionState,
  deps: SessionDeps,
  route: CallOn,
  context: ModelRequest['context'],
): Omit<ModelRequest, 'signal' | 'tools'> {
  const resolved = route.resolved ?? undefined;
  return {
    route: resolved ?? { route: route.name, provider: 'scripted', model: state.model.model, context_window: null },
    reasoning_effort: route.reasoning_effort,
    system: sessionSystemPrompt(state, deps, resolved),
    context,
    session_id: state.session_id,
  };
}

/** The request of a call on `route` with `context` (a turn's step, or a summarization). */
export function requestOn(state: SessionState, deps: SessionDeps, route: CallOn, context: ModelRequest['context']): Omit<ModelRequest, 'signal'> {
  return { ...requestWithoutTools(state, deps, route, context), tools: [...deps.tools.values()].map((t) => t.spec) };
}

/** The model client of a route (one that fails `unknown_route` when it is not configured). */
export function clientOf(deps: SessionDeps, name: string, resolved: ModelRoute | null): ModelClient {
  return resolved ? deps.modelClient(resolved) : unknownRouteClient(name);
}

/** The input of the model-step child actor; the context is read when the call starts. */
export function modelStepInput(state: SessionState, deps: SessionDeps, ports: SessionPorts): ModelStepInput {
  const call = callRoute(state, deps);
  return {
    client: clientOf(deps, call.route, call.resolved),
    // The tools come from the offer (built-in and MCP), made when the call starts.
    request: () =>
      requestWithoutTools(
        state,
        deps,
        { name: call.route, resolved: call.resolved, reasoning_effort: call.reasoning_effort },
        withReplySoFar(ports.modelContext(), state.turn?.reply_prefix),
      ),
    tools: () => ports.offerTools(),
    idleTimeoutMs: deps.config.limits.model_idle_timeout_ms,
  };
}
