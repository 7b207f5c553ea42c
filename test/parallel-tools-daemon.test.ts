/**
 * Parallel tool calls through a real daemon (docs/tools.md "Parallel tool calls"), driven
 * by the scripted model's `!shells A ;; B` and `!delegates A ;; B`: shell calls under
 * `auto` run at the same time (each waits until all have started) with their results in
 * the model's order; three delegate children's turns overlap; under `ask` approvals come
 * one at a time; an interrupt ends every running call; after kill -9 every started call
 * gets "outcome unknown" and the turn goes on.
 */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, test } from 'vitest';
import { connect, type Frame, type Msg, type TestClient } from './helpers/client.js';
import { startDaemon, tempDataDir, type Daemon } from './helpers/daemon.js';
import { cleanup } from './helpers/session.js';
import { checkJournal, settle } from './helpers/settle.js';

let daemons: Daemon[] = [];
let clients: TestClient[] = [];
let dirs: string[] = [];

afterEach(async () => {
  for (const c of clients) await c.close().catch(() => {});
  for (const d of daemons) await d.stop('SIGKILL').catch(() => {});
  for (const dir of dirs) cleanup(dir);
  daemons = [];
  clients = [];
  dirs = [];
});

async function boot(dataDir: string, config: object): Promise<{ d: Daemon; c: TestClient }> {
  const d = await startDaemon({ dataDir, config });
  daemons.push(d);
  const c = await connect(d);
  clients.push(c);
  return { d, c };
}

async function bootWithSession(policy: 'ask' | 'auto') {
  const dir = tempDataDir();
  dirs.push(dir);
  const config = { approval_policy: policy };
  const { d, c } = await boot(dir, config);
  const s = (await c.createSession({ cwd: dir, approval_policy: policy })).session_id as string;
  await c.attach(s);
  return { dir, d, c, s, config };
}

/** A command that marks `name` and waits (up to ~10 s) until all of `names` exist, then prints how many do. */
function meet(name: string, names: string[]): string {
  const all = names.map((n) => `[ -e ${n} ]`).join(' && ');
  return `touch ${name}; for i in $(seq 200); do ${all} && break; sleep 0.05; done; ls ${names.join(' ')} 2>/dev/null | wc -l | tr -d ' '`;
}

const ofType = (events: Msg[], type: string) => events.filter((m) => m.type === type);

describe('parallel tool calls through the daemon', () => {
  test('shell calls of one step under auto run at the same time; results join the transcript in the model’s order', async () => {
    const { c, s } = await bootWithSession('auto');
    const names = ['p1', 'p2', 'p3'];
    const id = await c.submitMessage(s, `!shells ${names.map((n) => meet(n, names)).join(' ;; ')}`);
    const end = await c.waitTurnEnd(s, id, 30_000);
    expect(end).toMatchObject({ type: 'turn_complete', tool_calls: 3, failed_tool_calls: 0 });
    const events = c.events(s);
    const begins = ofType(events, 'tool_call_begin').map((m) => m.call_id as string);
    expect(begins).toHaveLength(3);
    // Each saw all three markers: they ran at the same time.
    const ends = ofType(events, 'tool_call_end');
    expect(new Set(ends.map((m) => m.call_id))).toEqual(new Set(begins));
    for (const e of ends) expect(e).toMatchObject({ status: 'ok', exit_code: 0, output: '3\n' });
    // Output deltas are tagged with their own call.
    const deltas = ofType(events, 'exec_output_delta');
    expect(new Set(deltas.map((m) => m.call_id))).toEqual(new Set(begins));
    // The model's next call saw the results in order (one line per result).
    expect(end.last_message).toBe('command exited with code 0\ncommand exited with code 0\ncommand exited with code 0');
  }, 60_000);

  test('three delegate calls: the children’s turns overlap', async () => {
    const { c, s } = await bootWithSession('auto');
    const names = ['c1', 'c2', 'c3'];
    const id = await c.submitMessage(s, `!delegates ${names.map((n) => `!sh ${meet(n, names)}`).join(' ;; ')}`);
    const end = await c.waitTurnEnd(s, id, 40_000);
    expect(end).toMatchObject({ type: 'turn_complete', tool_calls: 3, failed_tool_calls: 0 });
    expect(end.last_message).toBe(['subagent: command exited with code 0', 'subagent: command exited with code 0', 'subagent: command exited with code 0'].join('\n'));
    const children = ofType(c.events(s), 'subagent_started').map((m) => m.child_session_id as string);
    expect(new Set(children).size).toBe(3);
    const spans: Array<{ start: number; end: number }> = [];
    for (const child of children) {
      const attached = await c.attach(child, { after_sequence: 0 });
      await c.waitForSequence(child, attached.head_sequence as number);
      const evs = c.batches(child).flatMap((b) => b.events as Frame[]);
      const started = evs.find((e) => e.msg.type === 'turn_started')!;
      const done = evs.find((e) => e.msg.type === 'turn_complete')!;
      expect(evs.find((e) => e.msg.type === 'tool_call_end')!.msg.output).toBe('3\n');
      spans.push({ start: started.ts as number, end: done.ts as number });
    }
    // Every child's turn started before any child's turn ended.
    expect(Math.max(...spans.map((x) => x.start))).toBeLessThanOrEqual(Math.min(...spans.map((x) => x.end)));
  }, 60_000);

  test('under ask the approvals come one at a time, in the model’s order; each approved call runs', async () => {
    const { dir, c, s } = await bootWithSession('ask');
    const id = await c.submitMessage(s, '!shells echo one > o1.txt ;; echo two > o2.txt');
    const first = await c.waitForEvent(s, (m) => m.type === 'exec_approval_request');
    const begins = ofType(c.events(s), 'tool_call_begin').map((m) => m.call_id);
    expect(first.call_id).toBe(begins[0]);
    // The second is not asked while the first waits.
    await new Promise((r) => setTimeout(r, 300));
    expect(ofType(c.events(s), 'exec_approval_request')).toHaveLength(1);
    await c.submit(s, 'a1', { type: 'exec_approval', id: first.approval_id, decision: 'approve' });
    const second = await c.waitForEvent(s, (m) => m.type === 'exec_approval_request' && m.approval_id !== first.approval_id);
    expect(second.call_id).toBe(begins[1]);
    await c.submit(s, 'a2', { type: 'exec_approval', id: second.approval_id, decision: 'deny' });
    const end = await c.waitTurnEnd(s, id);
    expect(end).toMatchObject({ type: 'turn_complete', tool_calls: 2, failed_tool_calls: 1 });
    expect(readFileSync(join(dir, 'o1.txt'), 'utf8')).toBe('one\n');
    expect(existsSync(join(dir, 'o2.txt'))).toBe(false);
    // Each call's end came when it ended (the approved echo may end after the deny)…
    const ends = ofType(c.events(s), 'tool_call_end');
    expect(new Map(ends.map((m) => [m.call_id, m.status]))).toEqual(new Map([
      [begins[0], 'ok'],
      [begins[1], 'denied'],
    ]));
    // …and the results joined the transcript in the model's order.
    expect(end.last_message).toBe('command exited with code 0\ncommand did not complete: the user denied this tool call');
  }, 40_000);

  test('an interrupt ends every running call', async () => {
    const { c, s } = await bootWithSession('auto');
    await c.submitMessage(s, '!shells echo a; sleep 30 ;; echo b; sleep 30 ;; echo c; sleep 30');
    await c.until(() => (new Set(ofType(c.events(s), 'exec_output_delta').map((m) => m.call_id)).size === 3 ? true : undefined), 15_000);
    const turnId = c.batches(s).flatMap((b) => b.events as Frame[]).find((e) => e.msg.type === 'turn_started')!.msg.turn_id;
    await c.submit(s, 'int', { type: 'interrupt', turn_id: turnId });
    // The interrupt's own submission id is on turn_interrupted.
    await c.waitForEvent(s, (m) => m.type === 'turn_interrupted');
    expect(ofType(c.events(s), 'turn_complete')).toHaveLength(0);
    const ends = ofType(c.events(s), 'tool_call_end');
    expect(ends).toHaveLength(3);
    for (const e of ends) expect(e.status).toBe('interrupted');
  }, 40_000);

  test('kill -9 while calls run: after the restart each started call is "outcome unknown" and the turn goes on', async () => {
    const first = await bootWithSession('auto');
    const { dir, config, s } = first;
    await first.c.submitMessage(s, '!shells echo go >> r1.log; sleep 20 ;; echo go >> r2.log; sleep 20', 'k1');
    await first.c.until(() => (existsSync(join(dir, 'r1.log')) && existsSync(join(dir, 'r2.log')) ? true : undefined), 15_000);
    first.d.proc.kill('SIGKILL');
    await first.d.exited;
    const { c } = await boot(dir, config);
    const events = checkJournal(await settle(c, s, 30_000)).map((e) => e.msg as Msg);
    const ends = ofType(events, 'tool_call_end');
    expect(ends).toHaveLength(2);
    for (const e of ends) expect(e).toMatchObject({ status: 'error', output: expect.stringMatching(/outcome is unknown/) });
    const done = ofType(events, 'turn_complete');
    expect(done).toHaveLength(1);
    expect(done[0]!.last_message).toMatch(/^command did not complete: the daemon restarted.*\ncommand did not complete: the daemon restarted/);
    expect(readFileSync(join(dir, 'r1.log'), 'utf8')).toBe('go\n');
    expect(readFileSync(join(dir, 'r2.log'), 'utf8')).toBe('go\n');
  }, 60_000);
});
