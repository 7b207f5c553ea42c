/**
 * Subagents through a real daemon (docs/tools.md), driven by the scripted model's
 * `!delegate TASK`: the child session (parent's cwd and policy, parent fields in its
 * descriptor), its last message as the call's result, subagent_started/_finished in the
 * parent, list_sessions hiding children, the child's approval shown on the parent and
 * answered on the child, interrupting the parent interrupts the child, the depth limit,
 * and kill -9 while the child waits (the parent keeps waiting; nothing runs twice).
 */
import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import type { Msg, TestClient } from './helpers/client.js';
import { openSession as session, startLive, stopLive, withRestarts, type Live } from './helpers/live.js';

async function listAll(c: TestClient, includeChildren?: boolean): Promise<Msg[]> {
  const page = await c.ok({ type: 'list_sessions', limit: 1000, ...(includeChildren !== undefined && { include_children: includeChildren }) });
  return page.sessions as Msg[];
}

describe('subagents through the daemon', () => {
  let live: Live;
  let c: TestClient;
  let cwd: string;

  beforeAll(async () => {
    live = await startLive('agentd-sub-cwd-', () => ({ approval_policy: 'auto' }));
    ({ c, cwd } = live);
  }, 30_000);

  afterAll(() => stopLive(live));

  test('delegate starts a child with the parent’s cwd and policy; its last message is the result; children are listed only on request', async () => {
    const sid = await session(c, { cwd, approval_policy: 'auto' });
    const id = await c.submitMessage(sid, '!delegate hello child');
    const end = await c.waitTurnEnd(sid, id, 20_000);
    expect(end).toMatchObject({ type: 'turn_complete', last_message: 'subagent: echo: hello child', tool_calls: 1, failed_tool_calls: 0 });
    const events = c.events(sid);
    const begin = events.find((m) => m.type === 'tool_call_begin')!;
    expect(begin).toMatchObject({ tool: 'delegate', arguments: { task: 'hello child' } });
    const started = events.find((m) => m.type === 'subagent_started')!;
    expect(started.call_id).toBe(begin.call_id);
    const child = started.child_session_id as string;
    expect(events.find((m) => m.type === 'tool_call_end')).toMatchObject({ status: 'ok', output: 'echo: hello child' });
    expect(events.find((m) => m.type === 'subagent_finished')).toEqual({ type: 'subagent_finished', call_id: begin.call_id, child_session_id: child, status: 'complete' });
    // The order in the parent's journal: begin, started, finished, end.
    const order = events.map((m) => m.type).filter((t) => ['tool_call_begin', 'subagent_started', 'subagent_finished', 'tool_call_end'].includes(t));
    expect(order).toEqual(['tool_call_begin', 'subagent_started', 'subagent_finished', 'tool_call_end']);

    expect((await listAll(c)).map((d) => d.session_id)).not.toContain(child);
    const all = await listAll(c, true);
    const descriptor = all.find((d) => d.session_id === child)!;
    expect(descriptor).toMatchObject({ parent_session_id: sid, parent_call_id: begin.call_id, cwd, approval_policy: 'auto', status: 'idle' });
    expect(all.find((d) => d.session_id === sid)).toMatchObject({ parent_session_id: null, parent_call_id: null, pending_child_approval: null });
    // The child's own journal: the task as its first message, answered by the same route.
    const attached = await c.attach(child, { replay_batches: 100 });
    expect(attached.session.parent_session_id).toBe(sid);
    await c.waitForSequence(child, attached.head_sequence as number);
    const childEvents = c.events(child);
    expect(childEvents.filter((m) => m.type === 'user_message').map((m) => m.text)).toEqual(['hello child']);
    expect(childEvents.find((m) => m.type === 'turn_complete')).toMatchObject({ last_message: 'echo: hello child' });
  }, 40_000);

  test('a child’s approval shows on the parent’s descriptor and is answered on the child', async () => {
    const sid = await session(c, { cwd, approval_policy: 'ask' });
    const id = await c.submitMessage(sid, '!delegate !sh echo from-child');
    const started = await c.waitForEvent(sid, (m) => m.type === 'subagent_started', 20_000);
    const child = started.child_session_id as string;
    await c.attach(child);
    const request = await c.waitForEvent(child, (m) => m.type === 'exec_approval_request', 20_000);
    expect(request).toMatchObject({ tool: 'shell', arguments: { command: 'echo from-child' }, cwd });
    const parent = (await listAll(c)).find((d) => d.session_id === sid)!;
    expect(parent.status).toBe('running');
    expect(parent.pending_child_approval).toEqual({ child_session_id: child, request });
    const attachedParent = await c.attach(sid, { replay_batches: 0 });
    expect(attachedParent.session.pending_child_approval).toMatchObject({ child_session_id: child });
    await c.submit(child, 'child-ap', { type: 'exec_approval', id: request.approval_id, decision: 'approve' });
    const end = await c.waitTurnEnd(sid, id, 20_000);
    expect(end).toMatchObject({ type: 'turn_complete', last_message: 'subagent: command exited with code 0' });
    expect((await listAll(c)).find((d) => d.session_id === sid)!.pending_child_approval).toBeNull();
  }, 40_000);

  test('interrupting the parent interrupts the child’s turn', async () => {
    const sid = await session(c, { cwd, approval_policy: 'auto' });
    await c.submitMessage(sid, '!delegate !sleep 30000');
    const turn = await c.waitForEvent(sid, (m) => m.type === 'turn_started');
    const started = await c.waitForEvent(sid, (m) => m.type === 'subagent_started', 20_000);
    const child = started.child_session_id as string;
    await c.attach(child);
    await c.waitForEvent(child, (m) => m.type === 'turn_started', 10_000);
    await c.submit(sid, 'int-parent', { type: 'interrupt', turn_id: turn.turn_id });
    await c.waitTurnEnd(sid, 'int-parent', 5000);
    const childEnd = await c.waitForEvent(child, (m) => m.type === 'turn_interrupted', 5000);
    expect(childEnd.reason).toBe('interrupted');
    const finished = c.events(sid).find((m) => m.type === 'subagent_finished')!;
    expect(finished).toMatchObject({ child_session_id: child, status: 'interrupted' });
    expect(c.events(sid).find((m) => m.type === 'tool_call_end')).toMatchObject({ status: 'interrupted' });
  }, 40_000);

  test('depth is limited to 2: the grandchild’s delegate call gets an error result', async () => {
    const sid = await session(c, { cwd, approval_policy: 'auto' });
    const id = await c.submitMessage(sid, '!delegate !delegate !delegate too deep');
    const end = await c.waitTurnEnd(sid, id, 30_000);
    expect(end.type).toBe('turn_complete');
    expect(end.last_message).toBe(
      'subagent: subagent: subagent: delegate: the subagent depth limit (2) is reached; do the task yourself',
    );
    const all = await listAll(c, true);
    const child = all.find((d) => d.parent_session_id === sid)!;
    const grandchild = all.find((d) => d.parent_session_id === child.session_id)!;
    expect(grandchild).toBeDefined();
    expect(all.some((d) => d.parent_session_id === grandchild.session_id)).toBe(false);
  }, 40_000);
});

describe('subagents and kill -9', () => {
  test('the parent keeps waiting for a child that waits for approval; both are recovered; nothing runs twice', async () => {
    await withRestarts('agentd-sub-kill-', () => ({ approval_policy: 'ask' }), async (r) => {
      const { cwd } = r;
      const sid = await session(r.c, { cwd, approval_policy: 'ask' });
      const id = await r.c.submitMessage(sid, '!delegate !sh echo once >> ran.txt');
      const started = await r.c.waitForEvent(sid, (m) => m.type === 'subagent_started', 20_000);
      const child = started.child_session_id as string;
      await r.c.attach(child);
      const request = await r.c.waitForEvent(child, (m) => m.type === 'exec_approval_request', 20_000);
      await r.restart('SIGKILL');
      const c = r.c;
      const parent = (await c.attach(sid, { replay_batches: 1000 })).session;
      expect(parent.status).toBe('running');
      expect(parent.pending_child_approval).toEqual({ child_session_id: child, request });
      const childAttached = await c.attach(child, { replay_batches: 1000 });
      await c.waitForSequence(child, childAttached.head_sequence as number);
      await c.submit(child, 'ap-after-restart', { type: 'exec_approval', id: request.approval_id, decision: 'approve' });
      const end = await c.waitTurnEnd(sid, id, 20_000);
      expect(end).toMatchObject({ type: 'turn_complete', last_message: 'subagent: command exited with code 0' });
      expect(readFileSync(`${cwd}/ran.txt`, 'utf8')).toBe('once\n');
      // One child, one task message, one subagent_started, one subagent_finished.
      expect((await listAll(c, true)).filter((d) => d.parent_session_id === sid)).toHaveLength(1);
      expect(c.events(child).filter((m) => m.type === 'user_message')).toHaveLength(1);
      expect(c.events(sid).filter((m) => m.type === 'subagent_started')).toHaveLength(1);
      expect(c.events(sid).filter((m) => m.type === 'subagent_finished')).toHaveLength(1);
      expect(c.events(sid).filter((m) => m.type === 'turn_resumed')).toHaveLength(1);
    });
  }, 90_000);

  test('a daemon stopped (SIGTERM) while a child runs leaves both turns open; after the start the parent gets the child’s reply', async () => {
    await withRestarts('agentd-sub-term-', () => ({ approval_policy: 'auto' }), async (r) => {
      const sid = await session(r.c, { cwd: r.cwd, approval_policy: 'auto' });
      const id = await r.c.submitMessage(sid, '!delegate !sleep 1500');
      const started = await r.c.waitForEvent(sid, (m) => m.type === 'subagent_started', 20_000);
      const child = started.child_session_id as string;
      await r.restart('SIGTERM');
      const c = r.c;
      await c.attach(sid, { replay_batches: 1000 });
      const end = await c.waitTurnEnd(sid, id, 20_000);
      expect(end).toMatchObject({ type: 'turn_complete', last_message: 'subagent: slept' });
      const childAttached = await c.attach(child, { replay_batches: 1000 });
      await c.waitForSequence(child, childAttached.head_sequence as number);
      expect(c.events(child).some((m) => m.type === 'turn_interrupted')).toBe(false);
      expect(c.events(sid).filter((m) => m.type === 'subagent_finished')).toEqual([
        { type: 'subagent_finished', call_id: started.call_id, child_session_id: child, status: 'complete' },
      ]);
    });
  }, 90_000);
});
