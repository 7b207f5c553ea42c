/**
 * Subagent limits (docs/tools.md) through a real daemon and the scripted model:
 * `limits.max_subagents_per_turn` and `limits.max_children` give an error result past
 * them, child titles obey the protocol's title limit, and a child is identified by its
 * parent's turn and call.
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import { LIMITS } from '../protocol/index.js';
import { childIds } from '../src/session/subagent.js';
import { connect, type TestClient } from './helpers/client.js';
import { startDaemon, type Daemon } from './helpers/daemon.js';

let d: Daemon;
let c: TestClient;
beforeAll(async () => {
  d = await startDaemon({ config: { approval_policy: 'auto', limits: { max_children: 1 } } });
  c = await connect(d);
}, 60_000);
afterAll(async () => {
  await c?.close();
  await d?.stop();
});

async function lastDelegate(s: string, text: string) {
  const id = await c.submitMessage(s, text);
  await c.waitTurnEnd(s, id, 30_000);
  const ends = c.events(s).filter((m) => m.type === 'tool_call_end');
  return ends[ends.length - 1]!;
}

it('a child is identified by the parent turn and call: the same call id in a later turn is a new child', () => {
  expect(childIds('s_p', 't_1', 'functions.delegate:0').child_session_id).not.toBe(childIds('s_p', 't_2', 'functions.delegate:0').child_session_id);
  expect(childIds('s_p', 't_1', 'c').child_session_id).toBe(childIds('s_p', 't_1', 'c').child_session_id);
});

it('limits.max_children: the next delegate gets an error result; child titles are bounded', async () => {
  const s = (await c.createSession({ approval_policy: 'auto' })).session_id as string;
  await c.attach(s);
  const first = await lastDelegate(s, `!tool delegate ${JSON.stringify({ task: 'say hi', title: 'T'.repeat(100_000) })}`);
  expect(first.status, first.output).toBe('ok');
  const list = await c.request({ type: 'list_sessions', req_id: 'l1', include_children: true });
  const child = (list.sessions as { session_id: string; title: string | null }[]).find((x) => x.session_id.startsWith('s_sub_'));
  expect(child, JSON.stringify(list).slice(0, 500)).toBeDefined();
  expect(child!.title!.length).toBeLessThanOrEqual(LIMITS.titleMaxChars);
  const second = await lastDelegate(s, '!delegate say hi again');
  expect(second.status).toBe('error');
  expect(second.output).toContain('limits.max_children');
}, 60_000);

it('limits.max_subagents_per_turn: 0 refuses every delegate with an error result', async () => {
  const d0 = await startDaemon({ config: { approval_policy: 'auto', limits: { max_subagents_per_turn: 0 } } });
  const c0 = await connect(d0);
  try {
    const s = (await c0.createSession({ approval_policy: 'auto' })).session_id as string;
    await c0.attach(s);
    const id = await c0.submitMessage(s, '!delegate say hi');
    await c0.waitTurnEnd(s, id, 30_000);
    const end = c0.events(s).find((m) => m.type === 'tool_call_end')!;
    expect(end.status).toBe('error');
    expect(end.output).toContain('limits.max_subagents_per_turn');
  } finally {
    await c0.close();
    await d0.stop();
  }
}, 60_000);
