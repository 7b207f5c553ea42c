/**
 * The session actor's statechart (XState v5), pure: guards read only the context and the
 * event, and actions only compute. What the actor needs from outside (was this message
 * admitted before? the head sequence, another session's summary) the pump looks up and
 * passes on the `submission` event (and the tool-run child on `tool.done`: whether the
 * inbox was empty); what a change produces (events, state, transcript
 * items, an admission) is emitted as a `change` effect — or, for the streaming actions
 * (deltas, thinking, tool output), left in `context.streamed` — and the Session hands it
 * to the Recorder. So the chart runs under XState's pure `transition()` as well as in an actor.
 * The turn's model call is an invoked child actor, cancelled (AbortSignal) whenever the
 * actor leaves its state; its tool calls run in spawned child actors (one per running call,
 * several at once: docs/tools.md), all stopped when the turn ends — by interrupt, abort,
 * failure or stop.
 *
 *   hydrating ─► idle ◄──────────────┐
 *      │  ▲       │ message            │
 *      │  │       ▼                    │
 *      │  └─ draining (cutoff) ◄─ turn: sampling ⇄ stepEnd → tools → awaiting_approval
 *      ▼                               │                        └─► running_tool
 *   recovering ─────────────────► turn.tools      boundary (cutoff) → [preparing] → sampling
 *                 (a result with the inbox empty: tools → [preparing] → sampling, no cutoff)
 *                                                  preparing ⇄ compacting (docs/context.md)
 */
import { and, assign, not, setup, spawnChild, stopChild } from 'xstate';
import { change, effects, op, stream, sub, type Ev } from './chart_change.js';
import { contextActions, contextGuards } from './chart_context.js';
import { admitAndStart, admitMessage, queueFullMessage, queueIsFull } from './admission.js';
import { requestApproval, resolveApproval } from './approval.js';
import type { SessionContext, SessionEffect, SessionEvent, SessionInput } from './chart_types.js';
import { journalFailureNote, modelStepInput, RESTART_NOTE } from './model_request.js';
import { modelStep } from './model_step.js';
import { compactStep, compactStepInput, takeRequestedCompaction } from './compaction.js';
import { capabilityCommand, resumeSession, setModel, warnApproval, warnInterrupt } from './ops.js';
import { callIndex, finishCall, recordSubagent, toolActorId, toolRun, type ToolRunInput } from './tool_step.js';
import { nextRefused, nextRunnable, nextToAsk, recoverStartedCalls, refuseNext, runningCalls, startNext } from './tool_dispatch.js';
import {
  completeTurn,
  drainSteer,
  endModelStep,
  failTurn,
  interruptTurn,
  startQueuedTurn,
} from './turn.js';
import { BEFORE_MODEL_CALL, boundaryGuards, PAST_CLEAR_STEP_BOUNDARY, PAST_STEP_BOUNDARY } from './chart_boundary.js';
import { failBudget } from './budget.js';

export const sessionMachine = setup({
  types: {
    context: {} as SessionContext,
    events: {} as SessionEvent,
    input: {} as SessionInput,
    emitted: {} as SessionEffect,
  },
  actors: { modelStep, toolRun, compactStep },
  guards: {
    awaitingApproval: ({ context }) => context.state.turn?.approval != null,
    turnOpen: ({ context }) => context.state.turn !== null,
    crashed: ({ context }) => context.fault?.code === 'internal',
    hasQueue: ({ context }) => context.state.queue.length > 0,
    recoveryExhausted: ({ context }) =>
      context.deps.config.recovery.policy === 'interrupt' ||
      (context.state.turn?.recovery_attempts ?? 0) >= context.deps.config.recovery.max_recovery_attempts,
    isAlreadyAdmitted: ({ event }) => op(event).type === 'message' && sub(event).facts.alreadyAdmitted,
    isQueueFull: ({ context, event }) => queueIsFull(context.state, context.deps.config, sub(event).item),
    isMessage: ({ event }) => op(event).type === 'message',
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
    // endModelStep decided it (the reply waits in `reply_prefix` while it is continued).
    lengthContinuation: ({ context }) => context.stepFinish === 'length' && context.state.turn?.reply_prefix !== undefined,
    ...boundaryGuards,
    callRefused: ({ context }) => nextRefused(context.state.turn) >= 0,
    canStartCall: ({ context }) => nextRunnable(context.state, context.deps) >= 0,
    needsApproval: ({ context }) => nextToAsk(context.state, context.deps) >= 0,
    hasRunningCalls: ({ context }) => runningCalls(context.state.turn).length > 0,
    fatal: ({ event }) => (event as Ev<'journal.failed'>).fatal,
    ...contextGuards,
  },
  actions: {
    takeCutoff: assign(({ context }) => ({ atCutoff: true, cutoffEpoch: context.cutoffEpoch + 1 })),
    leaveCutoff: assign({ atCutoff: false }),
    answerAlreadyAccepted: effects(({ event, enqueue }) => {
      enqueue.emit({ type: 'already_accepted', item: sub(event).item });
    }),
    refuseQueueFull: effects(({ context, event, enqueue }) => {
      enqueue.emit({ type: 'refused', item: sub(event).item, code: 'busy', message: queueFullMessage(context.deps.config) });
    }),
    handleSubmission: change((tx, ctx, event) => {
      const { item, facts } = sub(event);
      const o = item.submission.op;
      const id = item.submission.id;
      switch (o.type) {
        case 'message':
          return admitMessage(tx, item);
        case 'interrupt':
          return warnInterrupt(tx, o.turn_id, id);
        case 'exec_approval':
          return warnApproval(tx, o.id, id);
        case 'set_model':
          return setModel(tx, ctx.deps, o, id);
        case 'capability_command':
          return capabilityCommand(tx, ctx.deps, o, id, facts.headSequence, facts.tools ?? null);
        case 'resume_session':
          return resumeSession(tx, facts.other, o, id);
      }
    }),
    admitAndStart: change((tx, ctx, event) => admitAndStart(tx, ctx.deps, sub(event).item)),
    startQueuedTurn: change((tx, ctx) => {
      startQueuedTurn(tx, ctx.deps);
      takeRequestedCompaction(tx);
    }),
    interrupt: change((tx, ctx, event) =>
      interruptTurn(tx, 'interrupted', ctx.stepText, { submission_id: sub(event).item.submission.id }),
    ),
    resetStep: assign({ stepText: '', stepFailure: null, stepFinish: null }),
    recordWarnings: change((tx, _ctx, event: Ev<'model.warnings'>) => {
      for (const message of event.messages) tx.emit({ type: 'warning', message });
    }),
    recordDeltas: stream((tx, ctx, event: Ev<'model.deltas'>) => {
      tx.emitMessageDeltas(event.deltas);
      return { stepText: ctx.stepText + event.deltas.join('') };
    }),
    recordReasoning: stream((tx, _ctx, event: Ev<'model.reasoning'>) => {
      for (const delta of event.deltas) tx.emit({ type: 'agent_reasoning_delta', delta });
    }),
    ...contextActions,
    endStep: change((tx, ctx, event: Ev<'model.done'>) => ({
      stepFailure: endModelStep(tx, ctx.deps, { ...event.result, text: ctx.stepText }, event.approvals),
      stepText: '',
      stepFinish: event.result.finish,
    })),
    failStep: change((tx, ctx) => {
      if (ctx.stepFailure) failTurn(tx, ctx.stepFailure.code, ctx.stepFailure.message);
    }),
    failModel: change((tx, ctx, event: Ev<'model.failed'>) => failTurn(tx, event.code, event.message, ctx.stepText)),
    failBudget: change((tx) => failBudget(tx)),
    failMaxSteps: change((tx, ctx) =>
      failTurn(tx, 'max_model_steps_exceeded', `the turn reached max_model_steps (${ctx.deps.config.limits.max_model_steps})`),
    ),
    // The continuation call sees the reply so far and the note (model_request.ts), not the transcript.
    continueLength: change((tx) => {
      tx.setTurn({ output_recoveries: tx.turn.output_recoveries + 1 });
    }),
    complete: change((tx) => completeTurn(tx)),
    refuseCall: change((tx) => refuseNext(tx)),
    requestApproval: change((tx, ctx) => requestApproval(tx, ctx.deps, nextToAsk(tx.state, ctx.deps))),
    approve: change((tx, ctx, event) => {
      const o = op(event);
      if (o.type === 'exec_approval') resolveApproval(tx, ctx.deps, o.decision, sub(event).item.submission.id);
    }),
    deny: change((tx, ctx, event) => {
      const o = op(event);
      if (o.type !== 'exec_approval') return;
      const callId = tx.turn.approval!.call_id;
      resolveApproval(tx, ctx.deps, o.decision, sub(event).item.submission.id);
      finishCall(tx, { status: 'denied', output: 'the user denied this tool call' }, callId);
    }),
    abort: change((tx, ctx, event) => {
      const o = op(event);
      if (o.type !== 'exec_approval') return;
      resolveApproval(tx, ctx.deps, o.decision, sub(event).item.submission.id);
      interruptTurn(tx, 'interrupted', '', { submission_id: sub(event).item.submission.id });
    }),
    // The next call that may run is marked started (its child commits that before it runs)…
    startCall: change((tx, ctx) => ({ launching: startNext(tx, ctx.deps) })),
    // …and gets its own child actor, named by its call id (tool.* events carry the call id).
    spawnTool: spawnChild('toolRun', {
      id: ({ context }) => toolActorId(context.launching!),
      input: ({ context }): ToolRunInput => {
        const call = context.state.turn!.calls.find((c) => c.call.call_id === context.launching)!.call;
        return { call, ports: context.ports, cwd: context.state.cwd, sessionId: context.state.session_id };
      },
    }),
    // Leaving the turn (interrupt, abort, failure, stop) ends every running call.
    stopTools: effects(({ context, enqueue }) => {
      for (const c of runningCalls(context.state.turn)) enqueue.stopChild(toolActorId(c.call.call_id));
    }),
    // A call's child has sent its result: it leaves (its id may come again in a later step).
    releaseTool: stopChild(({ context, event }) => {
      const calls = context.state.turn?.calls ?? [];
      const call = calls[callIndex(calls, (event as Ev<'tool.done'>).call_id)];
      return toolActorId(call?.call.call_id ?? '');
    }),
    recordOutput: stream((tx, _ctx, event: Ev<'tool.output'>) => {
      const callId = tx.turn.calls[callIndex(tx.turn.calls, event.call_id)]?.call.call_id;
      if (callId) tx.emitOutputDeltas(callId, event.chunks);
    }),
    finishCall: change((tx, _ctx, event: Ev<'tool.done'>) => finishCall(tx, event.result, event.call_id)),
    recordSubagent: change((tx, _ctx, event: Ev<'tool.subagent'>) => recordSubagent(tx, event.child_session_id, event.call_id)),
    drainSteer: change((tx) => drainSteer(tx)),
    resumeTurn: change((tx, ctx) => {
      const attempt = tx.turn.recovery_attempts + 1;
      const fault = ctx.fault;
      tx.setTurn({ recovery_attempts: attempt, compacted_for_call: false });
      // After a journal failure the result and a warning name the real cause, not a restart.
      if (fault) tx.emit({ type: 'warning', message: `the turn was paused because ${fault.message}; it resumes from its last checkpoint` });
      recoverStartedCalls(tx, fault ? journalFailureNote(fault.message) : RESTART_NOTE);
      tx.emit({ type: 'turn_resumed', attempt });
      return { fault: null };
    }),
    interruptByRestart: change((tx) => interruptTurn(tx, 'interrupted by restart', '')),
    failCrashed: change((tx, ctx) => {
      failTurn(tx, 'internal', ctx.fault!.message);
      return { fault: null };
    }),
    rollback: effects(({ event, enqueue }) => {
      enqueue.emit({ type: 'rollback' });
      enqueue.assign({ state: (event as Ev<'journal.failed'>).committed, stepText: '', atCutoff: false });
    }),
    failAfterRollback: change((tx, _ctx, event: Ev<'journal.failed'>) =>
      failTurn(tx, 'journal_write_failed', `the journal could not commit: ${event.message}`),
    ),
  },
}).createMachine({
  id: 'session',
  context: ({ input }) => ({
    state: input.state,
    deps: input.deps,
    ports: input.ports,
    atCutoff: false,
    cutoffEpoch: 0,
    stepText: '',
    stepFailure: null,
    stepFinish: null,
    fault: input.fault ?? null,
    streamed: null,
    launching: null,
  }),
  initial: 'hydrating',
  on: {
    submission: [
      { guard: 'isAlreadyAdmitted', actions: 'answerAlreadyAccepted' },
      { guard: 'isQueueFull', actions: 'refuseQueueFull' },
      { actions: 'handleSubmission' },
    ],
    'journal.failed': [
      { guard: 'fatal', target: '.stopped', actions: 'rollback' },
      { target: '.hydrating', actions: ['rollback', 'failAfterRollback'] },
    ],
    stop: '.stopped',
  },
  states: {
    hydrating: {
      // A saved route no longer configured: the default route, with model_changed + warning.
      entry: 'fallbackRoute',
      always: [
        { guard: and(['turnOpen', 'crashed']), target: 'draining', actions: 'failCrashed' },
        // An approval pending: asked again as it was (through `tools`, which first starts
        // calls that may run); calls that were running beside it go through recovery first.
        { guard: and(['awaitingApproval', not('hasRunningCalls')]), target: 'turn.tools' },
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
        submission: [
          { guard: 'isAlreadyAdmitted', actions: 'answerAlreadyAccepted' },
          { guard: 'isMessage', target: 'turn', actions: 'admitAndStart' },
          // A manual compaction while idle is a turn of its own (docs/context.md).
          { guard: and(['isCompactCommand', 'hasContext']), target: 'turn', actions: 'startCompactionTurn' },
          { actions: 'handleSubmission' },
        ],
      },
    },
    draining: {
      entry: 'takeCutoff',
      exit: 'leaveCutoff',
      on: {
        'cutoff.reached': [
          { guard: 'hasQueue', target: 'turn', actions: 'startQueuedTurn' },
          { guard: 'compactionRequested', target: 'turn', actions: 'startCompactionTurn' },
          { target: 'idle' },
        ],
      },
    },
    turn: {
      initial: 'preparing',
      exit: 'stopTools',
      on: {
        // From each call's child actor, whichever state the step is in (docs/tools.md).
        'tool.output': { actions: 'recordOutput' },
        'tool.subagent': { actions: 'recordSubagent' },
        'tool.done': { target: '.tools', actions: ['releaseTool', 'finishCall'] },
        submission: [
          { guard: 'isAlreadyAdmitted', actions: 'answerAlreadyAccepted' },
          { guard: 'isInterruptOfActiveTurn', target: 'draining', actions: 'interrupt' },
          { guard: 'isQueueFull', actions: 'refuseQueueFull' },
          { actions: 'handleSubmission' },
        ],
      },
      states: {
        // Before each model call: compact when due; a compaction-only turn ends after it.
        preparing: {
          always: BEFORE_MODEL_CALL,
        },
        compacting: {
          invoke: {
            src: 'compactStep',
            input: ({ context }) => compactStepInput(context.state, context.deps, context.ports),
          },
          on: {
            'compact.done': { target: 'preparing', actions: 'recordCompaction' },
            'compact.failed': [
              { guard: 'compactOnly', target: '#session.draining', actions: 'compactionFailed' },
              { target: 'preparing', actions: 'compactionFailed' },
            ],
          },
        },
        sampling: {
          entry: 'resetStep',
          invoke: {
            src: 'modelStep',
            input: ({ context }) => modelStepInput(context.state, context.deps, context.ports),
          },
          on: {
            'model.deltas': { actions: 'recordDeltas' },
            'model.warnings': { actions: 'recordWarnings' },
            'model.reasoning': { actions: 'recordReasoning' },
            'model.done': { target: 'stepEnd', actions: 'endStep' },
            'model.failed': [
              // Too long for the window: one compaction, one retry; then context_window_exceeded.
              { guard: and(['isOverflow', 'overflowRetries']), target: 'preparing', actions: 'compactAfterOverflow' },
              { guard: 'isOverflow', target: '#session.draining', actions: 'failOverflow' },
              { target: '#session.draining', actions: 'failModel' },
            ],
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
            ...PAST_CLEAR_STEP_BOUNDARY,
            { guard: 'noCalls', target: 'boundary' },
            // Arguments past the bounds: an error result, no approval, nothing run.
            { guard: 'callRefused', actions: 'refuseCall' },
            // Every call that may run starts now (up to limits.max_parallel_tools)…
            { guard: 'canStartCall', actions: ['startCall', 'spawnTool'] },
            // …and those that need approval are asked one at a time, in the model's order.
            { guard: 'needsApproval', target: 'awaiting_approval', actions: 'requestApproval' },
            { guard: 'awaitingApproval', target: 'awaiting_approval' },
            { target: 'running_tool' },
          ],
        },
        awaiting_approval: {
          on: {
            submission: [
              { guard: 'isAlreadyAdmitted', actions: 'answerAlreadyAccepted' },
              { guard: { type: 'approvalIs', params: ['approve', 'approve_for_session'] }, target: 'tools', actions: 'approve' },
              { guard: { type: 'approvalIs', params: ['deny'] }, target: 'tools', actions: 'deny' },
              { guard: { type: 'approvalIs', params: ['abort'] }, target: '#session.draining', actions: 'abort' },
              { guard: 'isInterruptOfActiveTurn', target: '#session.draining', actions: 'interrupt' },
              { guard: 'isQueueFull', actions: 'refuseQueueFull' },
              { actions: 'handleSubmission' },
            ],
          },
        },
        // Calls run (each in its child actor, spawned by `tools`); their tool.* events are
        // handled on `turn`. Nothing is asked for approval now.
        running_tool: {},
        // Step boundary: steers at or below the cutoff join the next model call.
        boundary: {
          entry: 'takeCutoff',
          exit: 'leaveCutoff',
          on: {
            'cutoff.reached': PAST_STEP_BOUNDARY,
          },
        },
      },
    },
    stopped: {
      on: { submission: {}, 'journal.failed': {}, stop: {} },
    },
  },
});
