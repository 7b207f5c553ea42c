/**
 * The web UI's transcript fold (web/src/fold.ts): batches → items, the pending approval,
 * the active turn and the last outcome, including state seeded from the attach
 * descriptor and event types from Part II.
 */
import { describe, expect, it } from 'vitest';
import type { BatchFrame, SessionDescriptor } from '../protocol/index.js';
import { Folder, foldBatches, lastOutcomeOf } from '../web/src/fold.js';

let seq = 0;
function batch(...msgs: Array<Record<string, unknown>>): BatchFrame {
  seq++;
  return {
    type: 'batch',
    session_id: 's1',
    sequence: seq,
    committed_at: 1,
    events: msgs.map((msg) => ({ submission_id: null, turn_id: 't1', ts: 1, msg })) as BatchFrame['events'],
  };
}

const request = { type: 'exec_approval_request', approval_id: 'a1', call_id: 'c1', tool: 'shell', arguments: { command: 'ls' }, cwd: '/w' };

describe('Folder', () => {
  it('streams a reply into one item and finalizes it with agent_message', () => {
    seq = 0;
    const f = foldBatches([
      batch({ type: 'user_message', text: 'hi', mode: 'turn' }, { type: 'turn_started', turn_id: 't1' }),
      batch({ type: 'agent_message_delta', delta: 'ec' }, { type: 'agent_message_delta', delta: 'ho' }),
    ]);
    expect(f.state.activeTurnId).toBe('t1');
    const agent = f.state.items.find((i) => i.kind === 'agent');
    expect(agent).toMatchObject({ text: 'echo', done: false, seq: 2 });
    f.apply(batch({ type: 'agent_message', text: 'echo: hi' }, { type: 'turn_complete', last_message: 'echo: hi' }));
    expect(f.state.items.filter((i) => i.kind === 'agent')).toEqual([expect.objectContaining({ text: 'echo: hi', done: true })]);
    expect(f.state.activeTurnId).toBeNull();
    expect(f.state.lastOutcome).toBe('complete');
    expect(f.state.items.map((i) => i.kind)).toEqual(['user', 'turn_start', 'agent', 'turn_end']);
  });

  it('follows a tool call through approval, output and end', () => {
    seq = 0;
    const f = foldBatches([
      batch({ type: 'turn_started', turn_id: 't1' }),
      batch({ type: 'tool_call_begin', call_id: 'c1', tool: 'shell', arguments: { command: 'ls' } }, request),
    ]);
    expect(f.state.pendingApproval?.approval_id).toBe('a1');
    expect(f.state.items.find((i) => i.kind === 'tool')).toMatchObject({ status: 'waiting', tool: 'shell' });
    f.apply(batch({ type: 'approval_resolved', approval_id: 'a1', decision: 'approve_for_session' }));
    expect(f.state.pendingApproval).toBeNull();
    f.apply(batch({ type: 'exec_output_delta', call_id: 'c1', stream: 'stdout', chunk: 'a\n' }, { type: 'exec_output_delta', call_id: 'c1', stream: 'stdout', chunk: 'b\n' }));
    f.apply(batch({ type: 'tool_call_end', call_id: 'c1', status: 'ok', output: 'a\nb\n', exit_code: 0, duration_ms: 3 }));
    expect(f.state.items.find((i) => i.kind === 'tool')).toMatchObject({ status: 'ok', output: 'a\nb\n', exitCode: 0, decision: 'approve_for_session' });
  });

  it('an interrupted turn marks its running tool call interrupted and says "interrupted"', () => {
    seq = 0;
    const f = foldBatches([
      batch({ type: 'turn_started', turn_id: 't1' }, { type: 'tool_call_begin', call_id: 'c1', tool: 'shell', arguments: {} }),
      batch({ type: 'turn_interrupted', reason: 'interrupted' }),
    ]);
    expect(f.state.items.find((i) => i.kind === 'tool')).toMatchObject({ status: 'interrupted' });
    expect(f.state.items.at(-1)).toMatchObject({ kind: 'turn_end', outcome: 'interrupted' });
    expect(f.state.lastOutcome).toBe('interrupted');
  });

  it('starts from the attach descriptor when the request is older than the loaded batches', () => {
    seq = 40;
    const descriptor = { active_turn_id: 't1', pending_approval: request } as unknown as SessionDescriptor;
    const f = new Folder(descriptor);
    expect(f.state.pendingApproval?.approval_id).toBe('a1');
    expect(f.state.activeTurnId).toBe('t1');
    f.apply(batch({ type: 'approval_resolved', approval_id: 'other', decision: 'deny' }));
    expect(f.state.pendingApproval?.approval_id).toBe('a1'); // another id leaves it pending
    f.apply(batch({ type: 'approval_resolved', approval_id: 'a1', decision: 'approve' }));
    expect(f.state.pendingApproval).toBeNull();
    f.apply(batch({ type: 'exec_output_delta', call_id: 'c1', stream: 'stdout', chunk: 'x' }));
    expect(f.state.items.find((i) => i.kind === 'tool')).toMatchObject({ callId: 'c1', output: 'x' });
  });

  it('renders Part II markers with links to child sessions and ignores unknown events', () => {
    seq = 0;
    const f = foldBatches([
      batch({ type: 'agent_reasoning_delta', delta: 'thinking' }, { type: 'agent_message_delta', delta: 'ok' }),
      batch({ type: 'subagent_started', call_id: 'c2', child_session_id: 'child1' }, { type: 'some_future_event', x: 1 }),
      batch({ type: 'context_compacted', reason: 'manual', items_before: 10, items_after: 1, tokens_before: 900, tokens_after: 50, summary: 's' }),
    ]);
    expect(f.state.items.map((i) => i.kind)).toEqual(['reasoning', 'agent', 'note', 'note']);
    expect(f.state.items[2]).toMatchObject({ sessionLink: 'child1' });
    expect(f.state.items[3]).toMatchObject({ text: expect.stringContaining('context compacted (manual)') });
  });

  it('the same batches always fold to the same items (re-fold after a history page)', () => {
    seq = 0;
    const all = [
      batch({ type: 'user_message', text: 'a', mode: 'turn' }, { type: 'turn_started', turn_id: 't1' }),
      batch({ type: 'agent_message_delta', delta: 'x' }),
      batch({ type: 'agent_message_delta', delta: 'y' }),
      batch({ type: 'agent_message', text: 'xy' }, { type: 'turn_failed', error: { code: 'model_error', message: 'boom' } }),
    ];
    const once = foldBatches(all).state.items;
    const incremental = new Folder();
    for (const b of all) incremental.apply(b);
    expect(incremental.state.items).toEqual(once);
    expect(once.at(-1)).toMatchObject({ outcome: 'failed', detail: 'model_error: boom' });
    expect(lastOutcomeOf(all)).toBe('failed');
    expect(lastOutcomeOf(all.slice(0, 2))).toBeNull();
  });
});
