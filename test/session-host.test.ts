/** SessionHost: lazy hydration, idle eviction, listing, creation errors. */
import { afterEach, expect, test } from 'vitest';
import { AgentdError } from '../src/errors.js';
import { cleanup, msg, openHost, Watcher, type Harness } from './helpers/session.js';

let h: Harness;
afterEach(async () => {
  await h.close();
  cleanup(h.dir);
});

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

test('quiet sessions with no subscribers are evicted and hydrate again on open; busy or watched ones stay', async () => {
  h = openHost({ approval_policy: 'auto', limits: { evict_idle_ms: 100 } });
  const a = h.host.create({ cwd: h.dir });
  await sleep(300);
  expect(h.host.isResident(a.session_id)).toBe(false);
  expect(h.host.residentCount).toBe(0);

  // Hydrates lazily, with everything it had.
  const s = h.host.open(a.session_id)!;
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

  const b = h.host.create({ cwd: h.dir });
  const sb = h.host.open(b.session_id)!;
  const wb = new Watcher(sb);
  sb.submit(msg('hi'));
  await wb.next('turn_complete');
  wb.unsubscribe();
  await sleep(300);
  expect(h.host.isResident(b.session_id)).toBe(false);
  const again = h.host.open(b.session_id)!;
  expect(again.descriptor()).toMatchObject({ status: 'idle', head_sequence: sb.headSequence() });
});

test('list pages newest first', () => {
  h = openHost();
  const ids = Array.from({ length: 5 }, () => h.host.create({ cwd: h.dir }).session_id);
  const first = h.host.list({ limit: 2 });
  expect(first.sessions.map((s) => s.session_id)).toEqual([ids[4], ids[3]]);
  const second = h.host.list({ limit: 2, before: first.next_before! });
  expect(second.sessions.map((s) => s.session_id)).toEqual([ids[2], ids[1]]);
  const last = h.host.list({ limit: 2, before: second.next_before! });
  expect(last).toEqual({ sessions: [expect.objectContaining({ session_id: ids[0] })], next_before: null });
});

test('create refuses unknown routes and missing directories with typed errors', () => {
  h = openHost();
  expect(() => h.host.create({ model_route: 'nope' })).toThrow(AgentdError);
  expect(() => h.host.create({ cwd: '/definitely/not/here' })).toThrow(/not an existing directory/);
  expect(h.host.open('s_unknown')).toBeNull();
});

test('events of a turn carry the submission id of the message that started it', async () => {
  h = openHost({ approval_policy: 'auto' });
  const s = h.host.open(h.host.create({ cwd: h.dir }).session_id)!;
  const w = new Watcher(s);
  s.submit(msg('!sh echo hi', undefined, 'start-1'));
  await w.next('turn_complete');
  const inTurn = w.events.filter((e) => e.turn_id !== null);
  expect(inTurn.length).toBeGreaterThan(5);
  expect(new Set(inTurn.map((e) => e.submission_id))).toEqual(new Set(['start-1']));
});
