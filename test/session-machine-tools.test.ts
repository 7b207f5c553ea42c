/**
 * The chart paths of MCP tools and subagents under XState's pure `transition()`: MCP
 * warnings journaled from the model step, a tool's approval mode as offered (an MCP
 * server's `approval: "ask"` under session policy auto, `auto` under ask), subagent_started
 * once per call and subagent_finished with its result or when the turn is interrupted, and
 * recovery keeping a started delegate call waiting instead of "outcome unknown".
 */
import { describe, expect, test } from 'vitest';
import { newTurn } from '../src/session/state.js';
import { setupChart, step, submission } from './helpers/chart.js';

const begin = (policy: 'ask' | 'auto') => step(setupChart(policy), submission({ id: 'm1', op: { type: 'message', text: 'go' } })).next;
const mcpCall = { call_id: 'call_1', tool: 'fx__echo', arguments: { text: 'hi' } };
const delegateCall = { call_id: 'call_d', tool: 'delegate', arguments: { task: 'sub' } };

describe('tools in the chart', () => {
  test('MCP warnings from the model step become warning events of the turn', () => {
    const r = step(begin('auto'), { type: 'model.warnings', messages: ['MCP server "hung": did not start within 500 ms'] });
    expect(r.next.value).toEqual({ turn: 'sampling' });
    expect(r.msgs).toEqual([{ type: 'warning', message: 'MCP server "hung": did not start within 500 ms' }]);
  });

  test('an MCP tool offered with approval "ask" waits under session policy auto; "auto" runs under policy ask', () => {
    const asked = step(begin('auto'), { type: 'model.done', result: { calls: [mcpCall], finish: 'tool_calls', usage: null }, approvals: { fx__echo: 'ask' } });
    expect(asked.next.value).toEqual({ turn: 'awaiting_approval' });
    expect(asked.types).toEqual(['tool_call_begin', 'exec_approval_request']);
    expect(asked.next.context.state.turn.calls[0].approval).toBe('ask');
    const free = step(begin('ask'), { type: 'model.done', result: { calls: [mcpCall], finish: 'tool_calls', usage: null }, approvals: { fx__echo: 'auto' } });
    expect(free.next.value).toEqual({ turn: 'running_tool' });
    // No mode offered (an old checkpoint, an unknown tool): the built-in's needsApproval decides.
    const unknown = step(begin('ask'), { type: 'model.done', result: { calls: [mcpCall], finish: 'tool_calls', usage: null } });
    expect(unknown.next.value).toEqual({ turn: 'running_tool' });
  });

  test('a delegate call: subagent_started once, subagent_finished before its tool_call_end', () => {
    let r = step(begin('auto'), { type: 'model.done', result: { calls: [delegateCall], finish: 'tool_calls', usage: null }, approvals: { delegate: 'auto' } });
    expect(r.next.value).toEqual({ turn: 'running_tool' });
    r = step(r.next, { type: 'tool.subagent', child_session_id: 's_child' });
    expect(r.msgs).toEqual([{ type: 'subagent_started', call_id: 'call_d', child_session_id: 's_child' }]);
    expect(r.next.context.state.turn.calls[0].child_session_id).toBe('s_child');
    const again = step(r.next, { type: 'tool.subagent', child_session_id: 's_child' });
    expect(again.msgs).toEqual([]);
    const done = step(r.next, {
      type: 'tool.done',
      result: { status: 'ok', output: 'echo: sub', subagent: { child_session_id: 's_child', status: 'complete' } },
    });
    expect(done.types).toEqual(['subagent_finished', 'tool_call_end']);
    expect(done.msgs[0]).toEqual({ type: 'subagent_finished', call_id: 'call_d', child_session_id: 's_child', status: 'complete' });
    // Interrupting the parent instead ends the child's record as interrupted.
    const turnId = r.next.context.state.turn.turn_id;
    const int = step(r.next, submission({ id: 'i1', op: { type: 'interrupt', turn_id: turnId } }));
    expect(int.types).toEqual(['subagent_finished', 'tool_call_end', 'turn_interrupted']);
    expect(int.msgs[0]).toMatchObject({ child_session_id: 's_child', status: 'interrupted' });
  });

  test('a step boundary: the cutoff round trip unless the result came with the inbox empty (then on at once, as cutoff.reached would go)', () => {
    const readCall = (n: number) => ({ call_id: `call_${n}`, tool: 'read_file', arguments: { path: `f${n}` } });
    const running = (s = begin('auto'), n = 1) =>
      step(s, { type: 'model.done', result: { calls: [readCall(n)], finish: 'tool_calls', usage: null }, approvals: { read_file: 'auto' } }).next;
    const result = { status: 'ok' as const, output: 'text' };
    // Not known whether anything waits: the boundary takes a cutoff for the pump to answer.
    const r0 = running();
    const viaCutoff = step(r0, { type: 'tool.done', result });
    expect(viaCutoff.next.value).toEqual({ turn: 'boundary' });
    expect(viaCutoff.next.context.atCutoff).toBe(true);
    const answered = step(viaCutoff.next, { type: 'cutoff.reached' });
    // Nothing waited: the same next state and changes without the round trip.
    const clear = step(r0, { type: 'tool.done', result, inboxEmpty: true });
    expect(clear.next.value).toEqual({ turn: 'sampling' });
    expect(answered.next.value).toEqual(clear.next.value);
    expect(clear.next.context.atCutoff).toBe(false);
    expect(clear.next.context.cutoffEpoch).toBe(viaCutoff.next.context.cutoffEpoch - 1);
    expect(clear.types).toEqual([...viaCutoff.types, ...answered.types]);
    expect(clear.next.context.state.turn).toEqual(answered.next.context.state.turn);
    // Something waits: the pump hands it over at the cutoff first.
    expect(step(running(), { type: 'tool.done', result, inboxEmpty: false }).next.value).toEqual({ turn: 'boundary' });
    // A steer admitted while the tool ran joins the next call through preparing, as after a cutoff.
    const steered = step(running(), submission({ id: 's1', op: { type: 'message', text: 'also this', mode: 'steer' } })).next;
    const steer = step(steered, { type: 'tool.done', result, inboxEmpty: true });
    expect(steer.next.value).toEqual({ turn: 'sampling' });
    expect(steer.next.context.state.turn.steer).toEqual([]);
    expect(steer.effects.flatMap((e) => (e.type === 'change' ? e.change.items.map((i) => i.role) : []))).toEqual(['tool', 'user']);
    // max_model_steps reached at the boundary: the turn fails, as after a cutoff.
    const max = r0.context.deps.config.limits.max_model_steps;
    const turn = { ...r0.context.state.turn, model_calls: max };
    const atMax = { ...r0, context: { ...r0.context, state: { ...r0.context.state, turn } } } as typeof r0;
    const last = step(atMax, { type: 'tool.done', result, inboxEmpty: true });
    expect(last.next.value).toBe('draining');
    expect(last.types).toEqual(['tool_call_end', 'turn_failed']);
    expect(step(step(atMax, { type: 'tool.done', result }).next, { type: 'cutoff.reached' }).types).toEqual(['turn_failed']);
  });

  test('recovery: a started delegate call keeps waiting (runs again); another started call gets "outcome unknown"', () => {
    const open = (call: typeof delegateCall, child?: string) => ({
      ...newTurn('turn_r', 'm1', 1),
      calls: [{ call, started: true, approved: false, started_at: 1, approval: 'auto' as const, ...(child && { child_session_id: child }) }],
    });
    const waiting = setupChart('auto', { turn: open(delegateCall, 's_child') });
    expect(waiting.value).toEqual({ turn: 'running_tool' });
    expect(waiting.context.state.turn.calls[0]).toMatchObject({ call: delegateCall, child_session_id: 's_child' });
    const shell = setupChart('auto', { turn: open({ call_id: 'call_s', tool: 'shell', arguments: { command: 'ls' } } as never) });
    expect(shell.value).toEqual({ turn: 'boundary' });
    expect(shell.context.state.turn.calls).toEqual([]);
  });
});
