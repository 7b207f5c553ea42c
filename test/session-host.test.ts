/** SessionHost: lazy hydration, idle eviction, listing, creation errors. */
import { afterEach, expect, test } from 'vitest';
import { AgentdError } from '../src/errors.js';
import { cleanup, msg, op, openHost, Watcher, type Harness } from './helpers/session.js';

let h: Harness;
afterEach(async () => {
  await h.close();
  cleanup(h.dir);
});

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

test('quiet sessions with no subscribers are evicted and hydrate again on open; busy or watched ones stay', async () => {
  h = await openHost({ approval_policy: 'auto', limits: { evict_idle_ms: 100 } });
  const a = await h.host.create({ cwd: h.dir });
  await sleep(300);
  expect(h.host.isResident(a.session_id)).toBe(false);
  expect(h.host.residentCount).toBe(0);

  // Hydrates lazily, with everything it had.
  const s = (await h.host.open(a.session_id))!;
  expect(h.host.isResident(a.session_id)).toBe(true);
  const w = new Watcher(s);
  s.submit(msg('!sleep 400'));
  await w.next('turn_started');
  w.unsubscribe();
  await sleep(250);
  expect(h.host.isResident(a.session_id)).toBe(true); // a turn is running
  await w.session.subscribe(() => {});
  await sleep(500);
  expect(h.host.isResident(a.session_id)).toBe(true); // a subscriber is attached

  const b = await h.host.create({ cwd: h.dir });
  const sb = (await h.host.open(b.session_id))!;
  const wb = new Watcher(sb);
  sb.submit(msg('hi'));
  await wb.next('turn_complete');
  wb.unsubscribe();
  await sleep(300);
  expect(h.host.isResident(b.session_id)).toBe(false);
  const again = (await h.host.open(b.session_id))!;
  expect(again.descriptor()).toMatchObject({ status: 'idle', head_sequence: sb.headSequence() });
});

test('list pages newest first', async () => {
  h = await openHost();
  const ids: string[] = [];
  for (let i = 0; i < 5; i++) ids.push((await h.host.create({ cwd: h.dir })).session_id);
  const first = (await h.host.list({ limit: 2 }));
  expect(first.sessions.map((s) => s.session_id)).toEqual([ids[4], ids[3]]);
  const second = (await h.host.list({ limit: 2, before: first.next_before! }));
  expect(second.sessions.map((s) => s.session_id)).toEqual([ids[2], ids[1]]);
  const last = (await h.host.list({ limit: 2, before: second.next_before! }));
  expect(last).toEqual({ sessions: [expect.objectContaining({ session_id: ids[0] })], next_before: null });
});

test('create refuses unknown routes and missing directories with typed errors', async () => {
  h = await openHost();
  await expect(h.host.create({ model_route: 'nope' })).rejects.toThrow(AgentdError);
  await expect(h.host.create({ cwd: '/definitely/not/here' })).rejects.toThrow(/not an existing directory/);
  expect((await h.host.open('s_unknown'))).toBeNull();
});

test('events of a turn carry the submission id of the message that started it', async () => {
  h = await openHost({ approval_policy: 'auto' });
  const s = (await h.host.open((await h.host.create({ cwd: h.dir })).session_id))!;
  const w = new Watcher(s);
  s.submit(msg('!sh echo hi', undefined, 'start-1'));
  await w.next('turn_complete');
  const inTurn = w.events.filter((e) => e.turn_id !== null);
  expect(inTurn.length).toBeGreaterThan(5);
  expect(new Set(inTurn.map((e) => e.submission_id))).toEqual(new Set(['start-1']));
});

test('a session whose recovery fails gets a clear error; the daemon and other sessions go on', async () => {
  h = await openHost({ approval_policy: 'auto' });
  const broken = (await h.host.open((await h.host.create({ cwd: h.dir })).session_id))!;
  const fine = (await h.host.open((await h.host.create({ cwd: h.dir })).session_id))!;
  const bw = new Watcher(broken);
  const fw = new Watcher(fine);
  broken.submit(msg('!sleep 5000', undefined, 'long-b'));
  fine.submit(msg('!sleep 5000', undefined, 'long-f'));
  await bw.next('turn_started');
  await fw.next('turn_started');
  const turnId = broken.descriptor().active_turn_id;
  await h.close();
  // Corrupt one checkpoint behind the daemon's back.
  const Database = (await import('better-sqlite3')).default;
  const db = new Database(`${h.dir}/agentd.db`);
  db.prepare('UPDATE sessions SET checkpoint = ? WHERE session_id = ?').run('{"not":"a checkpoint"', broken.id);
  db.close();
  const host = await h.reopen();
  const events = (await host.readAfter(broken.id, 0, 1000)).flatMap((b) => b.events);
  const tail = events.slice(-2).map((e) => e.msg);
  expect(tail[0]).toMatchObject({ type: 'turn_failed', error: { code: 'recovery_failed' } });
  expect(events.at(-2)!.turn_id).toBe(turnId);
  expect(tail[1]).toMatchObject({ type: 'warning' });
  expect((tail[1] as { message: string }).message).toMatch(/session recovery failed/);
  // The other session was recovered and goes on.
  const other = (await host.readAfter(fine.id, 0, 1000)).flatMap((b) => b.events);
  expect(other.some((e) => e.msg.type === 'turn_resumed')).toBe(true);
  // Opening it says why; listing still shows the others.
  await expect(host.open(broken.id)).rejects.toThrow(/checkpoint is unreadable/);
  expect((await host.list({ limit: 10 })).sessions.map((d) => d.session_id)).toEqual([fine.id]);
  // A second start does not try again.
  await host.close();
  const again = await h.reopen();
  expect((await again.readAfter(broken.id, 0, 1000)).flatMap((b) => b.events)).toHaveLength(events.length);
});

test("one session's slow model or running tool never blocks another", async () => {
  h = await openHost({ approval_policy: 'auto' });
  const slowModel = (await h.host.open((await h.host.create({ cwd: h.dir })).session_id))!;
  const slowTool = (await h.host.open((await h.host.create({ cwd: h.dir })).session_id))!;
  const quick = (await h.host.open((await h.host.create({ cwd: h.dir })).session_id))!;
  const [wm, wt, wq] = [new Watcher(slowModel), new Watcher(slowTool), new Watcher(quick)];
  slowModel.submit(msg('!sleep 3000'));
  slowTool.submit(msg('!sh sleep 3'));
  await wm.next('turn_started');
  await wt.next('tool_call_begin');
  const t0 = Date.now();
  for (let i = 0; i < 5; i++) {
    quick.submit(msg(`quick ${i}`));
    await wq.next('turn_complete', i + 1);
  }
  expect(Date.now() - t0).toBeLessThan(1500);
  expect(slowModel.descriptor().status).toBe('running');
  expect(slowTool.descriptor().status).toBe('running');
  for (const s of [slowModel, slowTool]) s.submit(op({ type: 'interrupt', turn_id: s.descriptor().active_turn_id! }));
  await wm.next('turn_interrupted');
  await wt.next('turn_interrupted');
});

test('closing the host leaves no shell command running, even one that ignores TERM', async () => {
  h = await openHost({ approval_policy: 'auto' });
  const s = (await h.host.open((await h.host.create({ cwd: h.dir })).session_id))!;
  const w = new Watcher(s);
  s.submit(msg('!sh trap "" TERM; echo $$ > sh.pid; sleep 30 & wait'));
  await w.next('tool_call_begin');
  const { existsSync, readFileSync } = await import('node:fs');
  const file = `${h.dir}/sh.pid`;
  while (!existsSync(file) || !readFileSync(file, 'utf8').endsWith('\n')) await sleep(10);
  const pid = Number(readFileSync(file, 'utf8'));
  const alive = () => {
    try {
      process.kill(pid, 0);
      return true;
    } catch {
      return false;
    }
  };
  expect(alive()).toBe(true);
  await h.close();
  await sleep(50);
  expect(alive()).toBe(false);
  // The turn stays open in the journal, for recovery at the next start.
  const host = await h.reopen();
  const events = (await host.readAfter(s.id, 0, 100)).flatMap((b) => b.events);
  expect(events.some((e) => e.msg.type === 'turn_resumed')).toBe(true);
});
