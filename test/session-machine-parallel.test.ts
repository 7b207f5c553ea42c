/**
 * Parallel tool calls in the chart under XState's pure `transition()` (docs/tools.md
 * "Parallel tool calls"): one child actor per running call up to `limits.max_parallel_tools`,
 * `tool_call_end` when each call ends but results in the transcript in the model's order,
 * approvals asked one at a time while approval-free calls run, and recovery giving every
 * started call "outcome unknown" while keeping held results and a pending approval.
 */
import { describe, expect, test } from 'vitest';
import type { AnyMachineSnapshot } from 'xstate';
import type { SessionContext } from '../src/session/chart_types.js';
import { newTurn, type CallState } from '../src/session/state.js';
import { setupChart, step, submission } from './helpers/chart.js';

const read = (n: number) => ({ call_id: `r${n}`, tool: 'read_file', arguments: { path: `f${n}` } });
const shell = (n: number) => ({ call_id: `s${n}`, tool: 'shell', arguments: { command: `echo ${n}` } });
const ok = { status: 'ok' as const, output: 'text' };

/** The snapshot with `limits.max_parallel_tools` set. */
function withLimit(snapshot: AnyMachineSnapshot, max: number): AnyMachineSnapshot {
  const ctx = snapshot.context as SessionContext;
  const config = { ...ctx.deps.config, limits: { ...ctx.deps.config.limits, max_parallel_tools: max } };
  return { ...snapshot, context: { ...ctx, deps: { ...ctx.deps, config } } } as AnyMachineSnapshot;
}

const begin = (policy: 'ask' | 'auto', max = 8) => withLimit(step(setupChart(policy), submission({ id: 'm1', op: { type: 'message', text: 'go' } })).next, max);
const children = (s: AnyMachineSnapshot) => Object.keys(s.children).sort();
const items = (r: ReturnType<typeof step>) => r.effects.flatMap((e) => (e.type === 'change' ? e.change.items.map((i) => (i.role === 'tool' ? i.call_id : i.role)) : []));

describe('parallel tool calls in the chart', () => {
  test('at most max_parallel_tools run; ends as they come, transcript in the model’s order', () => {
    let r = step(begin('auto', 2), { type: 'model.done', result: { calls: [read(1), read(2), read(3)], finish: 'tool_calls', usage: null }, approvals: { read_file: 'auto' } });
    expect(r.next.value).toEqual({ turn: 'running_tool' });
    expect(children(r.next)).toEqual(['tool:r1', 'tool:r2']);
    expect(r.next.context.state.turn.calls.map((c: CallState) => c.started)).toEqual([true, true, false]);
    // The second ends first: its end now, its result held; the third starts.
    r = step(r.next, { type: 'tool.done', call_id: 'r2', result: ok });
    expect(r.types).toEqual(['tool_call_end']);
    expect(r.msgs[0]).toMatchObject({ call_id: 'r2' });
    expect(items(r)).toEqual([]);
    expect(r.next.context.state.turn.calls[1].ended).toEqual({ output: 'text' });
    expect(children(r.next)).toEqual(['tool:r1', 'tool:r3']);
    // Output is tagged with its own call.
    const out = step(r.next, { type: 'tool.output', call_id: 'r3', chunks: [{ stream: 'stdout', chunk: 'x' }] });
    expect(out.msgs).toEqual([{ type: 'exec_output_delta', call_id: 'r3', stream: 'stdout', chunk: 'x' }]);
    // The first ends: both results join the transcript, in order.
    r = step(r.next, { type: 'tool.done', call_id: 'r1', result: ok });
    expect(items(r)).toEqual(['r1', 'r2']);
    expect(r.next.context.state.turn.calls.map((c: CallState) => c.call.call_id)).toEqual(['r3']);
    r = step(r.next, { type: 'tool.done', call_id: 'r3', result: ok, inboxEmpty: true });
    expect(items(r)).toEqual(['r3']);
    expect(r.next.value).toEqual({ turn: 'sampling' });
    expect(r.next.context.state.turn.tool_calls).toBe(3);
  });

  test('under ask: approval-free calls run while approvals are asked one at a time, in order', () => {
    let r = step(begin('ask'), { type: 'model.done', result: { calls: [shell(1), read(2), shell(3)], finish: 'tool_calls', usage: null }, approvals: { read_file: 'auto' } });
    expect(r.next.value).toEqual({ turn: 'awaiting_approval' });
    expect(children(r.next)).toEqual(['tool:r2']);
    expect(r.msgs.filter((m) => m.type === 'exec_approval_request').map((m) => (m as { call_id: string }).call_id)).toEqual(['s1']);
    const first = r.next.context.state.turn.approval.approval_id;
    // The read ends while the approval waits: its end now, its result after s1's.
    r = step(r.next, { type: 'tool.done', call_id: 'r2', result: ok });
    expect(r.next.value).toEqual({ turn: 'awaiting_approval' });
    expect(r.types).toEqual(['tool_call_end']);
    r = step(r.next, submission({ id: 'a1', op: { type: 'exec_approval', id: first, decision: 'approve' } }));
    expect(r.types).toEqual(['approval_resolved', 'exec_approval_request']);
    expect(r.msgs[1]).toMatchObject({ call_id: 's3' });
    expect(children(r.next)).toEqual(['tool:s1']);
    const second = r.next.context.state.turn.approval.approval_id;
    r = step(r.next, submission({ id: 'a2', op: { type: 'exec_approval', id: second, decision: 'deny' } }));
    expect(r.types).toEqual(['approval_resolved', 'tool_call_end']);
    expect(items(r)).toEqual([]);
    expect(r.next.value).toEqual({ turn: 'running_tool' });
    r = step(r.next, { type: 'tool.done', call_id: 's1', result: { status: 'ok', output: '1\n', exit_code: 0 } });
    expect(items(r)).toEqual(['s1', 'r2', 's3']);
    expect(r.next.value).toEqual({ turn: 'boundary' });
  });

  test('an interrupt ends every running call and keeps a held result', () => {
    let r = step(begin('auto'), { type: 'model.done', result: { calls: [read(1), read(2), read(3)], finish: 'tool_calls', usage: null }, approvals: { read_file: 'auto' } });
    r = step(r.next, { type: 'tool.done', call_id: 'r3', result: ok });
    const turnId = r.next.context.state.turn.turn_id;
    const int = step(r.next, submission({ id: 'i1', op: { type: 'interrupt', turn_id: turnId } }));
    expect(int.next.value).toBe('draining');
    expect(children(int.next)).toEqual([]);
    expect(int.msgs.filter((m) => m.type === 'tool_call_end').map((m) => [(m as { call_id: string }).call_id, (m as { status: string }).status])).toEqual([
      ['r1', 'interrupted'],
      ['r2', 'interrupted'],
    ]);
    // Each call's result in order (r3's held one), then the interrupt's note.
    expect(items(int)).toEqual(['r1', 'r2', 'r3', 'system']);
    expect(int.effects.flatMap((e) => (e.type === 'change' ? e.change.items : [])).find((i) => i.role === 'tool' && i.call_id === 'r3')).toMatchObject({ output: 'text' });
  });

  test('recovery: every started call without a result is "outcome unknown"; held results stay; the rest start', () => {
    const call = (c: CallState['call'], extra: Partial<CallState>): CallState => ({ call: c, started: false, approved: false, started_at: null, approval: 'auto', ...extra });
    const turn = {
      ...newTurn('turn_r', 'm1', 1),
      calls: [call(shell(1), { started: true, started_at: 1, approval: undefined }), call(read(2), { started: true, started_at: 1, ended: { output: 'held' } }), call(read(3), { started: true, started_at: 1 }), call(read(4), {})],
    };
    const s = setupChart('auto', { turn });
    expect(s.value).toEqual({ turn: 'running_tool' });
    expect(children(s)).toEqual(['tool:r4']);
    expect(s.context.state.turn.calls.map((c: CallState) => c.call.call_id)).toEqual(['r4']);
    expect(s.context.state.turn.tool_calls).toBe(2);
    // With an approval pending beside a running call: recovered first, the approval kept.
    const approval = { type: 'exec_approval_request' as const, approval_id: 'appr_x', call_id: 's5', tool: 'shell', arguments: shell(5).arguments, cwd: '/work' };
    const asked = setupChart('ask', { turn: { ...newTurn('turn_q', 'm1', 1), approval, calls: [call(read(1), { started: true, started_at: 1 }), call(shell(5), { approval: undefined })] } });
    expect(asked.value).toEqual({ turn: 'awaiting_approval' });
    expect(asked.context.state.turn.approval).toEqual(approval);
    expect(asked.context.state.turn.calls.map((c: CallState) => c.call.call_id)).toEqual(['s5']);
    // With an approval pending and a call that may run but had not started: it starts, the approval stays.
    const waiting = setupChart('ask', { turn: { ...newTurn('turn_w', 'm1', 1), approval, calls: [call(shell(5), { approval: undefined }), call(read(6), {})] } });
    expect(waiting.value).toEqual({ turn: 'awaiting_approval' });
    expect(children(waiting)).toEqual(['tool:r6']);
    expect(waiting.context.state.turn.approval).toEqual(approval);
  });
});
