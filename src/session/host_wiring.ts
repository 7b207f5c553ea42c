/**
 * What a SessionHost builds once and shares with every session it hydrates: the actor's
 * deps (configuration, routes, tools, ids) and the toolbox factory (the built-ins, the
 * session's own `delegate`, its MCP toolset) — so an idle resident session holds no
 * toolbox and no closures of its own.
 */
import { customAlphabet } from 'nanoid';
import type { Config } from '../config/config.js';
import type { ModelClient, ModelRoute } from '../model/types.js';
import type { Toolset } from '../tools/index.js';
import type { SessionDeps } from './deps.js';
import type { ResidentSessionStats, SessionObserver } from './observer.js';
import type { Session } from './session.js';
import { sessionStatus } from './state.js';
import type { ToolboxFactory } from './session_ports.js';
import { createDelegateTool, DELEGATE_TOOL, type SubagentPort } from './subagent.js';
import { SessionToolbox } from './toolbox.js';

export const nanoid = customAlphabet('0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ', 16);

/** The deps every session of a host shares (immutable). */
export function sharedDeps(config: Config, routes: Map<string, ModelRoute>, toolset: Toolset, modelClient: (route: ModelRoute) => ModelClient): SessionDeps {
  return { config, routes, tools: toolset.tools, modelClient, newId: (prefix) => `${prefix}_${nanoid()}` };
}

/** The model clients as the observer wraps them (each route's client wrapped once); without one, as they are. */
export function observedModels(factory: (route: ModelRoute) => ModelClient, observer: SessionObserver | undefined): (route: ModelRoute) => ModelClient {
  const wrap = observer?.modelClient?.bind(observer);
  if (!wrap) return factory;
  const wrapped = new WeakMap<ModelClient, ModelClient>();
  return (route) => {
    const client = factory(route);
    let w = wrapped.get(client);
    if (!w) wrapped.set(client, (w = wrap(client)));
    return w;
  };
}

/** Resident sessions by status, and how many wait for an approval. */
export function residentStats(sessions: Iterable<Session>): ResidentSessionStats {
  const byStatus: Record<string, number> = { idle: 0, running: 0, awaiting_approval: 0 };
  let approvalsPending = 0;
  for (const s of sessions) {
    const status = sessionStatus(s.state);
    byStatus[status] = (byStatus[status] ?? 0) + 1;
    if (status === 'awaiting_approval') approvalsPending++;
  }
  return { byStatus, approvalsPending };
}

/** Builds a session's toolbox when the session first needs one: the host's tools, its `delegate`, its MCP toolset. */
export function toolboxFactory(toolset: Toolset, subagents: SubagentPort, maxDepth: number): ToolboxFactory {
  return (session, mcp) => {
    const delegate = createDelegateTool(
      subagents,
      () => {
        const s = session.state;
        return {
          session_id: s.session_id,
          turn_id: s.turn?.turn_id ?? null,
          cwd: s.cwd,
          approval_policy: s.approval_policy,
          route: s.model.route,
          depth: s.depth ?? 0,
          ...(s.mcp_servers && { mcp_servers: s.mcp_servers }),
        };
      },
      maxDepth,
    );
    return new SessionToolbox(new Map([...toolset.tools, [DELEGATE_TOOL, delegate]]), mcp);
  };
}
