/**
 * The session actor's statechart (XState v5). One submission at a time; the turn's model
 * call and tool runs are invoked child actors, cancelled (AbortSignal) whenever the
 * actor leaves their state — by interrupt, abort, failure or stop.
 *
 *   hydrating ─► idle ◄──────────────┐
 *      │  ▲       │ message            │
 *      │  │       ▼                    │
 *      │  └─ draining (cutoff) ◄─ turn: sampling ⇄ stepEnd → tools → awaiting_approval
 *      ▼                               │                        └─► running_tool
 *   recovering ─────────────────► turn.tools      boundary (cutoff) → sampling
 */
import { and, assign, setup } from 'xstate';
import { currentCallNeedsApproval, requestApproval, resolveApproval } from './approval.js';
import type { SessionDeps } from './deps.js';
import type { InboxItem } from './inbox.js';
import { modelStep, type ModelEvent, type ModelStepInput } from './model_step.js';
import { alreadyAdmitted, capabilityCommand, resumeSession, setModel, warnApproval, warnInterrupt } from './ops.js';
import type { SessionState } from './state.js';
import { finishCall, markCallStarted, toolRun, type ToolEvent, type ToolRunInput } from './tool_step.js';
import {
  completeTurn,
  drainSteer,
  endModelStep,
  failTurn,
  interruptTurn,
  startQueuedTurn,
  startTurn,
  type StepFailure,
} from './turn.js';
import { Tx } from './tx.js';
import { ModelError, type ModelClient } from '../model/types.js';

export interface SessionContext {
  state: SessionState;
  deps: SessionDeps;
  /** Set while draining between turns or at a step boundary: the last ingress seq to handle first. */
  cutoff: number | null;
  /** Text streamed by the current model call so far (not durable). */
  stepText: string;
  /** A turn limit hit at the end of the last model step. */
  stepFailure: StepFailure | null;
  /** How the last model step finished. */
  stepFinish: 'stop' | 'tool_calls' | 'length' | null;
  headSequence: () => number;
}

export type SessionEvent =
  | { type: 'submission'; item: InboxItem }
  | { type: 'cutoff.reached' }
  | ModelEvent
  | ToolEvent
  | { type: 'journal.failed'; committed: SessionState; message: string; fatal: boolean }
  | { type: 'stop' };

export interface SessionInput {
  state: SessionState;
  deps: SessionDeps;
  headSequence: () => number;
}

export const RESTART_NOTE = 'the daemon restarted while this tool call was running; its outcome is unknown and it was not run again';

type Ev<T extends SessionEvent['type']> = Extract<SessionEvent, { type: T }>;

/** An assign action that runs a change on a Tx and hands its events to the Recorder. */
function change<E extends SessionEvent = SessionEvent>(
  fn: (tx: Tx, ctx: SessionContext, event: E) => Partial<SessionContext> | void,
) {
  return assign<SessionContext, SessionEvent, undefined, SessionEvent, never>(({ context, event }) => {
    const tx = new Tx(context.state);
    const extra = fn(tx, context, event as E);
    if (tx.entries.length > 0 || tx.state !== context.state) {
      context.deps.recorder.record(tx.entries, tx.state, tx.admission);
    }
    return { ...extra, state: tx.state };
  });
}

const sub = (e: SessionEvent) => (e as Ev<'submission'>).item;
const op = (e: SessionEvent) => sub(e).submission.op;

/** Admit a message into the running turn (steer) or the queue. */
function admitMessage(tx: Tx, item: InboxItem): void {
  const { id, op } = item.submission;
  if (op.type !== 'message') return;
  tx.admission = { submission_id: id, onAdmitted: item.onAdmitted, onRejected: item.onRejected };
  const turn = tx.state.turn;
  if (turn && op.mode === 'steer') {
    tx.setTurn({ steer: [...turn.steer, op.text] });
    tx.emit({ type: 'user_message', text: op.text, mode: 'steer' }, { submission_id: id });
  } else {
    tx.set({ queue: [...tx.state.queue, { submission_id: id, text: op.text }] });
    tx.emit({ type: 'user_message', text: op.text, mode: 'queued' }, { submission_id: id, turn_id: null });
  }
}

function unknownRouteClient(route: string): ModelClient {
  return {
    // eslint-disable-next-line require-yield
    async *stream() {
      throw new ModelError('unknown_route', `model route "${route}" is not configured`);
    },
  };
}

export const sessionMachine = setup({
  types: {
    context: {} as SessionContext,
    events: {} as SessionEvent,
    input: {} as SessionInput,
  },
  actors: { modelStep, toolRun },
  guards: {
    awaitingApproval: ({ context }) => context.state.turn?.approval != null,
    turnOpen: ({ context }) => context.state.turn !== null,
    hasQueue: ({ context }) => context.state.queue.length > 0,
    recoveryExhausted: ({ context }) =>
      context.deps.config.recovery.policy === 'interrupt' ||
      (context.state.turn?.recovery_attempts ?? 0) >= context.deps.config.recovery.max_recovery_attempts,
    isFreshMessage: ({ context, event }) =>
      op(event).type === 'message' && !context.deps.isAdmitted(sub(event).submission.id),
    isInterruptOfActiveTurn: ({ context, event }) => {
      const o = op(event);
      return o.type === 'interrupt' && o.turn_id === context.state.turn?.turn_id;
    },
    approvalIs: ({ context, event }, decisions: readonly string[]) => {
      const o = op(event);
      return (
        o.type === 'exec_approval' &&
        o.id === context.state.turn?.approval?.approval_id &&
        decisions.includes(o.decision)
      );
    },
    stepFailed: ({ context }) => context.stepFailure !== null,
    hasCalls: ({ context }) => (context.state.turn?.calls.length ?? 0) > 0,
    lengthContinuation: ({ context }) =>
      context.stepFinish === 'length' &&
      (context.state.turn?.output_recoveries ?? 0) < context.deps.config.limits.max_output_recovery_attempts,
    noCalls: ({ context }) => (context.state.turn?.calls.length ?? 0) === 0,
    inboxEmpty: ({ context }) => context.deps.inbox.size === 0,
    hasSteer: ({ context }) => (context.state.turn?.steer.length ?? 0) > 0,
    needsApproval: ({ context }) => currentCallNeedsApproval(context.state, context.deps),
    maxStepsReached: ({ context }) =>
      (context.state.turn?.model_calls ?? 0) >= context.deps.config.limits.max_model_steps,
    fatal: ({ event }) => (event as Ev<'journal.failed'>).fatal,
  },
  actions: {
    setCutoff: assign({ cutoff: ({ context }) => context.deps.inbox.lastAssigned }),
    clearCutoff: assign({ cutoff: null }),
    handleSubmission: change((tx, ctx, event) => {
      const item = sub(event);
      const o = item.submission.op;
      const id = item.submission.id;
      switch (o.type) {
        case 'message':
          if (!alreadyAdmitted(item, ctx.deps)) admitMessage(tx, item);
          return;
        case 'interrupt':
          return warnInterrupt(tx, o.turn_id, id);
        case 'exec_approval':
          return warnApproval(tx, o.id, id);
        case 'set_model':
          return setModel(tx, ctx.deps, o, id);
        case 'capability_command':
          return capabilityCommand(tx, o, id, ctx.headSequence());
        case 'resume_session':
          return resumeSession(tx, ctx.deps, o, id);
      }
    }),
    admitAndStart: change((tx, ctx, event) => {
      const item = sub(event);
      const o = item.submission.op;
      if (o.type !== 'message') return;
      tx.admission = { submission_id: item.submission.id, onAdmitted: item.onAdmitted, onRejected: item.onRejected };
      tx.emit({ type: 'user_message', text: o.text, mode: 'turn' }, { submission_id: item.submission.id, turn_id: null });
      startTurn(tx, ctx.deps, item.submission.id, o.text);
    }),
    startQueuedTurn: change((tx, ctx) => startQueuedTurn(tx, ctx.deps)),
    interrupt: change((tx, ctx, event) =>
      interruptTurn(tx, ctx.deps, 'interrupted', ctx.stepText, { submission_id: sub(event).submission.id }),
    ),
    resetStep: assign({ stepText: '', stepFailure: null, stepFinish: null }),
    recordDeltas: change((tx, ctx, event: Ev<'model.deltas'>) => {
      tx.emitMessageDeltas(event.deltas);
      return { stepText: ctx.stepText + event.deltas.join('') };
    }),
    endStep: change((tx, ctx, event: Ev<'model.done'>) => ({
      stepFailure: endModelStep(tx, ctx.deps, { ...event.result, text: ctx.stepText }),
      stepText: '',
      stepFinish: event.result.finish,
    })),
    failStep: change((tx, ctx) => {
      if (ctx.stepFailure) failTurn(tx, ctx.deps, ctx.stepFailure.code, ctx.stepFailure.message);
    }),
    failModel: change((tx, ctx, event: Ev<'model.failed'>) => failTurn(tx, ctx.deps, event.code, event.message, ctx.stepText)),
    failMaxSteps: change((tx, ctx) =>
      failTurn(tx, ctx.deps, 'max_model_steps_exceeded', `the turn reached max_model_steps (${ctx.deps.config.limits.max_model_steps})`),
    ),
    continueLength: change((tx, ctx) => {
      tx.setTurn({ output_recoveries: tx.turn.output_recoveries + 1 });
      ctx.deps.transcript.append({ role: 'system', text: 'Your reply was cut off by the output length limit. Continue exactly where it stopped.' });
    }),
    complete: change((tx) => completeTurn(tx)),
    requestApproval: change((tx, ctx) => requestApproval(tx, ctx.deps)),
    approve: change((tx, _ctx, event) => {
      const o = op(event);
      if (o.type === 'exec_approval') resolveApproval(tx, o.decision, sub(event).submission.id);
    }),
    deny: change((tx, ctx, event) => {
      const o = op(event);
      if (o.type !== 'exec_approval') return;
      resolveApproval(tx, o.decision, sub(event).submission.id);
      finishCall(tx, ctx.deps, { status: 'denied', output: 'the user denied this tool call' });
    }),
    abort: change((tx, ctx, event) => {
      const o = op(event);
      if (o.type !== 'exec_approval') return;
      resolveApproval(tx, o.decision, sub(event).submission.id);
      interruptTurn(tx, ctx.deps, 'interrupted', '', { submission_id: sub(event).submission.id });
    }),
    markStarted: change((tx) => markCallStarted(tx)),
    recordOutput: change((tx, _ctx, event: Ev<'tool.output'>) => {
      const callId = tx.turn.calls[0]?.call.call_id;
      if (!callId) return;
      tx.emitOutputDeltas(callId, event.chunks);
    }),
    finishCall: change((tx, ctx, event: Ev<'tool.done'>) => finishCall(tx, ctx.deps, event.result)),
    drainSteer: change((tx, ctx) => drainSteer(tx, ctx.deps)),
    resumeTurn: change((tx, ctx) => {
      const turn = tx.turn;
      const attempt = turn.recovery_attempts + 1;
      tx.setTurn({ recovery_attempts: attempt, approval: null });
      if (turn.calls[0]?.started) finishCall(tx, ctx.deps, { status: 'error', output: RESTART_NOTE });
      tx.emit({ type: 'turn_resumed', attempt });
    }),
    interruptByRestart: change((tx, ctx) => interruptTurn(tx, ctx.deps, 'interrupted by restart', '')),
    rollback: assign(({ context, event }) => {
      context.deps.recorder.discardPending();
      return { state: (event as Ev<'journal.failed'>).committed, stepText: '', cutoff: null };
    }),
    failAfterRollback: change((tx, ctx, event: Ev<'journal.failed'>) =>
      failTurn(tx, ctx.deps, 'journal_write_failed', `the journal could not commit: ${event.message}`),
    ),
  },
}).createMachine({
  id: 'session',
  context: ({ input }) => ({
    state: input.state,
    deps: input.deps,
    cutoff: null,
    stepText: '',
    stepFailure: null,
    stepFinish: null,
    headSequence: input.headSequence,
  }),
  initial: 'hydrating',
  on: {
    submission: { actions: 'handleSubmission' },
    'journal.failed': [
      { guard: 'fatal', target: '.stopped', actions: 'rollback' },
      { target: '.hydrating', actions: ['rollback', 'failAfterRollback'] },
    ],
    stop: '.stopped',
  },
  states: {
    hydrating: {
      always: [
        { guard: 'awaitingApproval', target: 'turn.awaiting_approval' },
        { guard: 'turnOpen', target: 'recovering' },
        { guard: 'hasQueue', target: 'draining' },
        { target: 'idle' },
      ],
    },
    recovering: {
      always: [
        { guard: 'recoveryExhausted', target: 'draining', actions: 'interruptByRestart' },
        { target: 'turn.tools', actions: 'resumeTurn' },
      ],
    },
    idle: {
      on: {
        submission: [{ guard: 'isFreshMessage', target: 'turn', actions: 'admitAndStart' }, { actions: 'handleSubmission' }],
      },
    },
    draining: {
      entry: 'setCutoff',
      exit: 'clearCutoff',
      on: {
        'cutoff.reached': [{ guard: 'hasQueue', target: 'turn', actions: 'startQueuedTurn' }, { target: 'idle' }],
      },
    },
    turn: {
      initial: 'sampling',
      on: {
        submission: [
          { guard: 'isInterruptOfActiveTurn', target: 'draining', actions: 'interrupt' },
          { actions: 'handleSubmission' },
        ],
      },
      states: {
        sampling: {
          entry: 'resetStep',
          invoke: {
            src: 'modelStep',
            input: ({ context }): ModelStepInput => {
              const { deps, state } = context;
              const route = deps.routes.get(state.model.route);
              return {
                client: route ? deps.modelClient(route) : unknownRouteClient(state.model.route),
                request: {
                  route: route ?? { route: state.model.route, provider: 'scripted', model: state.model.model, context_window: null },
                  reasoning_effort: state.model.reasoning_effort,
                  context: deps.transcript.all().slice(),
                  tools: [...deps.tools.values()].map((t) => t.spec),
                },
                idleTimeoutMs: deps.config.limits.model_idle_timeout_ms,
              };
            },
          },
          on: {
            'model.deltas': { actions: 'recordDeltas' },
            'model.done': { target: 'stepEnd', actions: 'endStep' },
            'model.failed': { target: '#session.draining', actions: 'failModel' },
          },
        },
        stepEnd: {
          always: [
            { guard: 'stepFailed', target: '#session.draining', actions: 'failStep' },
            { guard: 'hasCalls', target: 'tools' },
            { guard: 'lengthContinuation', target: 'boundary', actions: 'continueLength' },
            { guard: 'hasSteer', target: 'boundary' },
            { target: '#session.draining', actions: 'complete' },
          ],
        },
        tools: {
          always: [
            // Step boundary. With nothing waiting in the inbox the cutoff has nothing to
            // hand over: go straight to the next model call.
            {
              guard: and(['noCalls', 'inboxEmpty', 'maxStepsReached']),
              target: '#session.draining',
              actions: 'failMaxSteps',
            },
            { guard: and(['noCalls', 'inboxEmpty']), target: 'sampling', actions: 'drainSteer' },
            { guard: 'noCalls', target: 'boundary' },
            { guard: 'needsApproval', target: 'awaiting_approval', actions: 'requestApproval' },
            { target: 'running_tool' },
          ],
        },
        awaiting_approval: {
          on: {
            submission: [
              { guard: { type: 'approvalIs', params: ['approve', 'approve_for_session'] }, target: 'running_tool', actions: 'approve' },
              { guard: { type: 'approvalIs', params: ['deny'] }, target: 'tools', actions: 'deny' },
              { guard: { type: 'approvalIs', params: ['abort'] }, target: '#session.draining', actions: 'abort' },
              { guard: 'isInterruptOfActiveTurn', target: '#session.draining', actions: 'interrupt' },
              { actions: 'handleSubmission' },
            ],
          },
        },
        running_tool: {
          entry: 'markStarted',
          invoke: {
            src: 'toolRun',
            input: ({ context }): ToolRunInput => {
              const call = context.state.turn!.calls[0]!.call;
              return {
                call,
                tool: context.deps.tools.get(call.tool),
                cwd: context.state.cwd,
                commitStart: () => context.deps.recorder.flush(),
              };
            },
          },
          on: {
            'tool.output': { actions: 'recordOutput' },
            'tool.done': { target: 'tools', actions: 'finishCall' },
          },
        },
        boundary: {
          entry: 'setCutoff',
          exit: 'clearCutoff',
          on: {
            'cutoff.reached': [
              { guard: 'maxStepsReached', target: '#session.draining', actions: 'failMaxSteps' },
              { target: 'sampling', actions: 'drainSteer' },
            ],
          },
        },
      },
    },
    stopped: {
      on: { submission: {}, 'journal.failed': {}, stop: {} },
    },
  },
});
