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
