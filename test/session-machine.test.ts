/**
 * The session statechart alone, under XState's pure `transition()`: no actor, no journal,
 * no I/O. Guards and actions see only the context and the event; what a change produces is
 * an emitted `change` effect. Covers the cutoff, approval and interrupt paths.
 */
import type { AnyMachineSnapshot } from 'xstate';
import { describe, expect, test } from 'vitest';
import { setupChart, step, submission } from './helpers/chart.js';

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
