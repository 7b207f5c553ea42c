/**
 * The session statechart alone, under XState's pure `transition()`: no actor, no journal,
 * no I/O. Guards and actions see only the context and the event; what a change produces is
 * an emitted `change` effect (or, when streaming, `context.streamed`). Covers the cutoff,
 * approval, interrupt and streaming paths.
 */
import { initialTransition, type AnyMachineSnapshot } from 'xstate';
import { describe, expect, test } from 'vitest';
import { sessionMachine } from '../src/session/machine.js';
import { ports, setupChart, step, submission } from './helpers/chart.js';

const started = (s: AnyMachineSnapshot) => s.context.state.turn!;

describe('session chart under transition()', () => {
  test('the cutoff: a turn ends into draining; ops up to the cutoff apply before the queued turn starts', () => {
    let s = setupChart('auto');
    let r = step(s, submission({ id: 'm1', op: { type: 'message', text: 'first' } }));
    expect(r.next.value).toEqual({ turn: 'sampling' });
    expect(r.types).toEqual(['user_message', 'turn_started']);
    s = step(r.next, submission({ id: 'm2', op: { type: 'message', text: 'second' } })).next;
    expect(s.context.state.queue).toEqual([{ submission_id: 'm2', text: 'second' }]);
    // The reply ends the turn: draining takes a cutoff.
    r = step(s, { type: 'model.done', result: { calls: [], finish: 'stop', usage: null } });
    expect(r.next.value).toBe('draining');
    expect(r.next.context.atCutoff).toBe(true);
    expect(r.types).toContain('turn_complete');
    const epoch = r.next.context.cutoffEpoch;
    // An op before the cutoff is handled in draining, before the queued turn.
    r = step(r.next, submission({ id: 'o1', op: { type: 'set_model', route: 'nowhere' } }));
    expect(r.next.value).toBe('draining');
    expect(r.types).toEqual(['warning']);
    // A message already admitted (the pump looked it up) is answered and changes nothing.
    const dup = step(r.next, submission({ id: 'm1', op: { type: 'message', text: 'first' } }, { alreadyAdmitted: true }));
    expect(dup.effects.map((e) => e.type)).toEqual(['already_accepted']);
    expect(dup.next.context.state).toBe(r.next.context.state);
    r = step(dup.next, { type: 'cutoff.reached' });
    expect(r.next.value).toEqual({ turn: 'sampling' });
    expect(r.next.context.atCutoff).toBe(false);
    expect(started(r.next).submission_id).toBe('m2');
    expect(r.next.context.state.queue).toEqual([]);
    // The next turn's end takes a fresh cutoff.
    r = step(r.next, { type: 'model.done', result: { calls: [], finish: 'stop', usage: null } });
    expect(r.next.context.cutoffEpoch).toBe(epoch + 1);
  });

  test('approval: a call under policy ask waits; a stale id warns; approve runs it; deny skips it', () => {
    let s = step(setupChart('ask'), submission({ id: 'm1', op: { type: 'message', text: '!sh ls' } })).next;
    const call = { call_id: 'call_1', tool: 'shell', arguments: { command: 'ls' } };
    let r = step(s, { type: 'model.done', result: { calls: [call, { ...call, call_id: 'call_2' }], finish: 'tool_calls', usage: null } });
    expect(r.next.value).toEqual({ turn: 'awaiting_approval' });
    expect(r.types).toEqual(['tool_call_begin', 'tool_call_begin', 'exec_approval_request']);
    const approval = started(r.next).approval!;
    expect(approval).toMatchObject({ call_id: 'call_1', tool: 'shell', arguments: { command: 'ls' } });
    expect(r.next.context.state.turn.approval).toEqual(approval);
    s = r.next;
    r = step(s, submission({ id: 'a0', op: { type: 'exec_approval', id: 'appr_other', decision: 'approve' } }));
    expect(r.next.value).toEqual({ turn: 'awaiting_approval' });
    expect(r.types).toEqual(['warning']);
    r = step(s, submission({ id: 'a1', op: { type: 'exec_approval', id: approval.approval_id, decision: 'deny' } }));
    // Denied: the call ends, the next call asks in turn.
    expect(r.types).toEqual(['approval_resolved', 'tool_call_end', 'exec_approval_request']);
    expect(r.next.value).toEqual({ turn: 'awaiting_approval' });
    const second = started(r.next).approval!;
    r = step(r.next, submission({ id: 'a2', op: { type: 'exec_approval', id: second.approval_id, decision: 'approve' } }));
    expect(r.next.value).toEqual({ turn: 'running_tool' });
    expect(started(r.next).calls[0]).toMatchObject({ approved: true, started: true });
    // The start is a checkpoint change; it is committed by the tool's child, not the chart.
    expect(r.effects.filter((e) => e.type === 'change')).toHaveLength(2);
  });

  test('streaming: deltas, thinking and tool output leave one change each in context.streamed; nothing is emitted, no child starts', () => {
    let s = step(setupChart('auto'), submission({ id: 'm1', op: { type: 'message', text: 'go' } })).next;
    const turnId = started(s).turn_id;
    let r = step(s, { type: 'model.deltas', deltas: ['a', 'b"c'] });
    // The Session records what the transition left there; its only actions are the assign.
    expect(r.actions.map((a) => a.type)).toEqual([]);
    expect(r.effects).toEqual([]);
    expect(r.streamed!.entries.map((e) => JSON.parse(e))).toEqual([
      { submission_id: 'm1', turn_id: turnId, ts: expect.any(Number), msg: { type: 'agent_message_delta', delta: 'a' } },
      { submission_id: 'm1', turn_id: turnId, ts: expect.any(Number), msg: { type: 'agent_message_delta', delta: 'b"c' } },
    ]);
    expect(r.next.context.stepText).toBe('ab"c');
    // Each streaming transition leaves a new change; the next one does not repeat it.
    const first = r.streamed;
    r = step(r.next, { type: 'model.reasoning', deltas: ['think'] });
    expect(r.streamed).not.toBe(first);
    expect(r.types).toEqual(['agent_reasoning_delta']);
    expect(r.actions).toEqual([]);
    // A transition that is not streaming leaves context.streamed as it was.
    const call = { call_id: 'call_1', tool: 'shell', arguments: { command: 'ls' } };
    r = step(r.next, { type: 'model.done', result: { calls: [call], finish: 'tool_calls', usage: null } });
    expect(r.streamed).toBeNull();
    expect(r.next.value).toEqual({ turn: 'running_tool' });
    s = r.next;
    r = step(s, { type: 'tool.output', chunks: [{ stream: 'stdout', chunk: 'out\n' }] });
    expect(r.actions).toEqual([]);
    expect(r.types).toEqual(['exec_output_delta']);
    expect(r.streamed!.items).toEqual([]);
    // An empty run changes nothing: no new change to record.
    expect(step(s, { type: 'tool.output', chunks: [] }).streamed).toBeNull();
  });

  test('interrupt: the active turn id ends the turn (partial reply kept), another id warns; abort ends it too', () => {
    let s = step(setupChart('ask'), submission({ id: 'm1', op: { type: 'message', text: 'long' } })).next;
    s = step(s, { type: 'model.deltas', deltas: ['par', 'tial'] }).next;
    expect(s.context.stepText).toBe('partial');
    const turnId = started(s).turn_id;
    let r = step(s, submission({ id: 'i0', op: { type: 'interrupt', turn_id: 'turn_other' } }));
    expect(r.next.value).toEqual({ turn: 'sampling' });
    expect(r.types).toEqual(['warning']);
    r = step(s, submission({ id: 'i1', op: { type: 'interrupt', turn_id: turnId } }));
    expect(r.next.value).toBe('draining');
    expect(r.next.context.state.turn).toBeNull();
    expect(r.types).toEqual(['turn_interrupted']);
    const change = r.effects.find((e) => e.type === 'change')!;
    expect(change.type === 'change' && change.change.items.map((i) => i.role)).toEqual(['assistant', 'system']);
    // Abort from a pending approval.
    const call = { call_id: 'call_1', tool: 'shell', arguments: { command: 'ls' } };
    s = step(s, { type: 'model.done', result: { calls: [call], finish: 'tool_calls', usage: null } }).next;
    const approval = started(s).approval!;
    r = step(s, submission({ id: 'x1', op: { type: 'exec_approval', id: approval.approval_id, decision: 'abort' } }));
    expect(r.next.value).toBe('draining');
    expect(r.types).toEqual(['approval_resolved', 'tool_call_end', 'turn_interrupted']);
  });

  test('a journal failure rolls back to the committed state and fails the turn', () => {
    const s0 = setupChart('auto');
    const committed = s0.context.state;
    const s = step(s0, submission({ id: 'm1', op: { type: 'message', text: 'x' } })).next;
    const r = step(s, { type: 'journal.failed', committed, message: 'disk full', fatal: false });
    expect(r.effects[0]).toEqual({ type: 'rollback' });
    expect(r.next.value).toBe('idle');
    expect(r.next.context.state).toBe(committed);
    const fatal = step(s, { type: 'journal.failed', committed, message: 'disk full', fatal: true });
    expect(fatal.next.value).toBe('stopped');
  });
});

// ---- context (engineer "context"): compaction paths of the chart (docs/context.md) ----
describe('compaction under transition()', () => {
  /** A chart whose session route has a 1000-token window and `estimate` tokens in its context. */
  function windowed(estimate: number, failures = 0) {
    const s = setupChart('auto');
    const state = s.context.state;
    const model = { ...state.model, context_window: 1000 };
    const context = { estimated_tokens: estimate, items: 4, compaction_failures: failures };
    return { ...s, context: { ...s.context, state: { ...state, model, context } } } as AnyMachineSnapshot;
  }
  const outcome = { older: [], keep_from: 3, items_before: 6, items_after: 3, kept_tokens: 100, summary: 'summary: a', tokens_after: 300, usage: null };

  test('over the threshold a turn compacts before its model call; the outcome is recorded and the call follows', () => {
    let r = step(windowed(799), submission({ id: 'm1', op: { type: 'message', text: 'hi' } }));
    // 799 + the message's estimate (7) passes 0.8 × 1000.
    expect(r.next.value).toEqual({ turn: 'compacting' });
    r = step(r.next, { type: 'compact.done', outcome });
    expect(r.next.value).toEqual({ turn: 'sampling' });
    expect(r.msgs.find((m: { type: string }) => m.type === 'context_compacted')).toMatchObject({
      reason: 'auto',
      items_before: 6,
      items_after: 3,
      tokens_after: 300,
      summary: 'summary: a',
    });
    expect(r.next.context.state.context).toMatchObject({ estimated_tokens: 300, items: 3, compaction_failures: 0 });
    const changes = r.effects.filter((e) => e.type === 'change');
    expect(changes.flatMap((e) => (e.type === 'change' ? e.change.items : []))).toEqual([{ role: 'compaction', summary: 'summary: a', keep_from: 3 }]);
  });

  test('under the threshold, or without a window, no compaction', () => {
    expect(step(windowed(100), submission({ id: 'm1', op: { type: 'message', text: 'hi' } })).next.value).toEqual({ turn: 'sampling' });
    const none = setupChart('auto');
    const big = { ...none, context: { ...none.context, state: { ...none.context.state, context: { estimated_tokens: 1e9, items: 9, compaction_failures: 0 } } } } as AnyMachineSnapshot;
    expect(step(big, submission({ id: 'm1', op: { type: 'message', text: 'hi' } })).next.value).toEqual({ turn: 'sampling' });
  });

  test('a failed compaction counts for the breaker and the call goes on; with the breaker open a call that does not fit fails context_window_exceeded', () => {
    let r = step(windowed(799), submission({ id: 'm1', op: { type: 'message', text: 'hi' } }));
    r = step(r.next, { type: 'compact.failed', code: 'provider_error', message: 'boom' });
    expect(r.next.value).toEqual({ turn: 'sampling' });
    expect(r.types).toEqual(['warning']);
    expect(r.next.context.state.context.compaction_failures).toBe(1);
    // Breaker open (2 failures) and over the window: no call, the turn fails.
    r = step(windowed(1200, 2), submission({ id: 'm2', op: { type: 'message', text: 'hi' } }));
    expect(r.next.value).toBe('draining');
    expect(r.msgs.find((m: { type: string }) => m.type === 'turn_failed').error.code).toBe('context_window_exceeded');
  });

  test('a provider overflow: one compaction (overflow), one retry; a second overflow fails context_window_exceeded', () => {
    let r = step(windowed(100), submission({ id: 'm1', op: { type: 'message', text: 'hi' } }));
    expect(r.next.value).toEqual({ turn: 'sampling' });
    r = step(r.next, { type: 'model.failed', code: 'context_overflow', message: 'prompt is too long' });
    expect(r.next.value).toEqual({ turn: 'compacting' });
    r = step(r.next, { type: 'compact.done', outcome });
    expect(r.msgs.find((m: { type: string }) => m.type === 'context_compacted').reason).toBe('overflow');
    expect(r.next.value).toEqual({ turn: 'sampling' });
    r = step(r.next, { type: 'model.failed', code: 'context_overflow', message: 'prompt is too long' });
    expect(r.next.value).toBe('draining');
    expect(r.msgs.find((m: { type: string }) => m.type === 'turn_failed').error.code).toBe('context_window_exceeded');
  });

  test('an interrupt during a compaction ends the turn; a restart resumes into a fresh compaction', () => {
    let r = step(windowed(100), submission({ id: 'c1', op: { type: 'capability_command', capability: 'session', command: 'compact' } }));
    expect(r.next.value).toEqual({ turn: 'compacting' });
    const turnId = started(r.next).turn_id;
    // Recovery: the open compaction-only turn goes back through preparing into compacting.
    const hydrated = initialTransition(sessionMachine, { state: r.next.context.state, deps: r.next.context.deps, ports })[0];
    expect(hydrated.value).toEqual({ turn: 'boundary' });
    const resumed = step(hydrated, { type: 'cutoff.reached' });
    expect(resumed.next.value).toEqual({ turn: 'compacting' });
    r = step(r.next, submission({ id: 'i1', op: { type: 'interrupt', turn_id: turnId } }));
    expect(r.next.value).toBe('draining');
    expect(r.types).toEqual(['turn_interrupted']);
  });

  test('session compact while idle is a turn of its own; with an empty transcript a warning', () => {
    const empty = step(setupChart('auto'), submission({ id: 'c0', op: { type: 'capability_command', capability: 'session', command: 'compact' } }));
    expect(empty.next.value).toBe('idle');
    expect(empty.msgs).toEqual([{ type: 'warning', message: 'nothing to compact: the transcript is empty' }]);
    let r = step(windowed(100), submission({ id: 'c1', op: { type: 'capability_command', capability: 'session', command: 'compact' } }));
    expect(r.next.value).toEqual({ turn: 'compacting' });
    expect(r.types).toEqual(['turn_started']);
    r = step(r.next, { type: 'compact.done', outcome });
    expect(r.types).toEqual(['context_compacted', 'turn_complete']);
    expect(r.next.value).toBe('draining');
  });
});
