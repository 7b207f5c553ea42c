/**
 * The session statechart under XState's pure `transition()`: a chart with ports that fail
 * the test if a guard or an action reaches for them, submissions with pump facts, and a
 * step that returns the next snapshot with the events of its changes.
 */
import { initialTransition, transition, type AnyMachineSnapshot } from 'xstate';
import type { Submission } from '../../protocol/index.js';
import { parseConfig } from '../../src/config/config.js';
import type { SessionContext, SessionEffect, SessionEvent, SubmissionFacts } from '../../src/session/chart_types.js';
import type { SessionDeps, SessionPorts } from '../../src/session/deps.js';
import { sessionMachine } from '../../src/session/machine.js';
import { newSessionState, type SessionState } from '../../src/session/state.js';
import type { Tool } from '../../src/tools/types.js';

/** Ports that fail the test if a guard or an action reaches for them. */
export const ports: SessionPorts = {
  context: () => {
    throw new Error('the chart read the transcript');
  },
  modelContext: () => {
    throw new Error('the chart read the transcript');
  },
  commitStart: () => {
    throw new Error('the chart committed');
  },
  inboxEmpty: () => {
    throw new Error('the chart looked at the inbox');
  },
  offerTools: () => Promise.reject(new Error('the chart listed tools')),
  tool: () => Promise.reject(new Error('the chart looked up a tool')),
};

/** A chart in its first state after hydration; `state` overrides fields of a new session's checkpoint. */
export function setupChart(policy: 'ask' | 'auto' = 'ask', state: Partial<SessionState> = {}) {
  let n = 0;
  const shell: Tool = {
    spec: { name: 'shell', description: 'run a command', parameters: {} },
    needsApproval: true,
    run: () => Promise.reject(new Error('never run under transition()')),
  };
  const deps: SessionDeps = {
    config: parseConfig({ approval_policy: policy }),
    routes: new Map(),
    tools: new Map([['shell', shell]]),
    modelClient: () => {
      throw new Error('no model under transition()');
    },
    newId: (prefix) => `${prefix}_${++n}`,
  };
  const initial = newSessionState({
    session_id: 's_chart',
    cwd: '/work',
    approval_policy: policy,
    model: { route: 'scripted', model: 'scripted', reasoning_effort: null, context_window: null },
    title: null,
    at: 1,
  });
  const [snapshot] = initialTransition(sessionMachine, { state: { ...initial, ...state }, deps, ports });
  return snapshot;
}

const facts: SubmissionFacts = { alreadyAdmitted: false, headSequence: 1, other: null };
let seq = 0;
export const submission = (s: Submission, f: Partial<SubmissionFacts> = {}): SessionEvent => ({
  type: 'submission',
  item: { submission: s, ingress_seq: ++seq },
  facts: { ...facts, ...f },
});

/**
 * Step the chart; returns the next snapshot, its emitted effects, the streaming change it
 * left in `context.streamed` (null if none), and the events of all its changes in the
 * order the Session records them (the streaming change first).
 */
export function step(snapshot: AnyMachineSnapshot, event: SessionEvent) {
  const [next, actions] = transition(sessionMachine, snapshot as never, event);
  const effects = actions.filter((a) => a.type === 'xstate.emit').map((a) => (a.params as { event: SessionEffect }).event);
  const before = (snapshot.context as SessionContext).streamed;
  const after = (next.context as SessionContext).streamed;
  const streamed = after !== before ? after : null;
  const changes = [...(streamed ? [streamed] : []), ...effects.flatMap((e) => (e.type === 'change' ? [e.change] : []))];
  const msgs = changes.flatMap((c) => c.entries.map((x) => JSON.parse(x).msg));
  return { next, effects, streamed, actions, msgs, types: msgs.map((m: { type: string }) => m.type) };
}
