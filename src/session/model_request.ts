/**
 * What the model is sent: the request of one model call (route, effort, context, tools)
 * and the runtime's notes to the model. Kept out of the statechart.
 */
import { ModelError, type ModelClient, type ModelRequest } from '../model/types.js';
import type { SessionDeps, SessionPorts } from './deps.js';
import type { ModelStepInput } from './model_step.js';
import type { SessionState } from './state.js';

/** The result given to a tool call that was running when the daemon restarted. */
export const RESTART_NOTE = 'the daemon restarted while this tool call was running; its outcome is unknown and it was not run again';

/** Told to the model when its reply was cut off by the output length limit. */
export const LENGTH_CONTINUATION_NOTE = 'Your reply was cut off by the output length limit. Continue exactly where it stopped.';

/** The result given to a tool call that was running when the journal stopped accepting commits. */
export function journalFailureNote(message: string): string {
  return `the session paused while this tool call was running (${message}); its outcome is unknown and it was not run again`;
}

function unknownRouteClient(route: string): ModelClient {
  return {
    async *stream() {
      throw new ModelError('unknown_route', `model route "${route}" is not configured`);
    },
  };
}

/** The input of the model-step child actor; the context is read when the call starts. */
export function modelStepInput(state: SessionState, deps: SessionDeps, ports: SessionPorts): ModelStepInput {
  const route = deps.routes.get(state.model.route);
  return {
    client: route ? deps.modelClient(route) : unknownRouteClient(state.model.route),
    request: (): Omit<ModelRequest, 'signal' | 'tools'> => ({
      route: route ?? { route: state.model.route, provider: 'scripted', model: state.model.model, context_window: null },
      reasoning_effort: state.model.reasoning_effort,
      context: ports.context().slice(),
    }),
    tools: ports.offerTools,
    idleTimeoutMs: deps.config.limits.model_idle_timeout_ms,
  };
}
