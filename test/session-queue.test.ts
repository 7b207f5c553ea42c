/**
 * Queued turns never lock a session (docs/architecture.md): admitted messages waiting for their
 * turn leave the inbox, the durable queue is bounded by `limits.max_queued_turns`, and an
 * `exec_approval` or `interrupt` is handled however many turns are queued — before and
 * after a restart. Real SessionHost, real SQLite file.
 */
import { expect, test } from 'vitest';
import type { Session } from '../src/session/session.js';
import { msg, op, openTestHost, Watcher, type Harness } from './helpers/session.js';

let h: Harness | undefined;

/** Queue `n` messages, in bursts the inbox can take, each burst admitted before the next. */
async function queueMessages(s: Session, n: number, burst: number, text: (i: number) => string): Promise<void> {
  for (let sent = 0; sent < n; ) {
    const admitted: Promise<void>[] = [];
    for (let i = 0; i < burst && sent < n; i++, sent++) {
      admitted.push(
        new Promise<void>((resolve, reject) => {
          const r = s.submit(msg(text(sent)), () => resolve(), (m) => reject(new Error(m)));
          if (!r.ok) reject(new Error(`${r.code}: ${r.message}`));
        }),
      );
    }
    await Promise.all(admitted);
  }
}

/** A session whose turn waits for approval of a shell call. */
async function awaitingApproval(config: object) {
  h = await openTestHost({ approval_policy: 'ask', ...config });
  const id = (await h.host.create({ cwd: h.dir })).session_id;
  const s = (await h.host.open(id))!;
  const w = new Watcher(s);
  s.submit(msg('!sh echo first'));
  const req = await w.next('exec_approval_request');
  return { id, s, w, req };
}

test('a turn waiting for approval with more queued turns than the inbox holds can still be interrupted and approved, also after a restart', async () => {
  const first = await awaitingApproval({ limits: { inbox_capacity: 8 } });
  const { id } = first;
  let { s, w } = first;
  await queueMessages(s, 40, 8, (i) => `!sh echo queued ${i}`);
  expect(s.descriptor()).toMatchObject({ status: 'awaiting_approval', queued_turns: 40 });
  // The inbox is empty again: a burst up to its capacity is taken.
  const burst = Array.from({ length: 8 }, () => s.submit(op({ type: 'capability_command', capability: 'session', command: 'status' })));
  expect(burst.every((r) => r.ok)).toBe(true);
  await w.next('capability_output', 8);
  // Interrupt the waiting turn: the next queued turn starts and waits for its approval.
  expect(s.submit(op({ type: 'interrupt', turn_id: s.descriptor().active_turn_id! })).ok).toBe(true);
  await w.next('turn_interrupted');
  await w.next('exec_approval_request', 2);
  expect(s.descriptor()).toMatchObject({ status: 'awaiting_approval', queued_turns: 39 });

  // After a restart the same: the queue is in the checkpoint, not in the inbox.
  await h!.close();
  await h!.reopen();
  s = (await h!.host.open(id))!;
  w = new Watcher(s);
  const pending = s.descriptor();
  expect(pending).toMatchObject({ status: 'awaiting_approval', queued_turns: 39 });
  const approve = s.submit(op({ type: 'exec_approval', id: pending.pending_approval!.approval_id, decision: 'approve' }));
  expect(approve.ok).toBe(true);
  expect((await w.next('tool_call_end')).exit_code).toBe(0);
  await w.next('turn_complete');
  await w.next('exec_approval_request');
  expect(s.descriptor()).toMatchObject({ status: 'awaiting_approval', queued_turns: 38 });
  expect(s.submit(op({ type: 'interrupt', turn_id: s.descriptor().active_turn_id! })).ok).toBe(true);
  await w.next('turn_interrupted');
});

test('the queue is bounded by limits.max_queued_turns: busy "queue full" at enqueue and when handled', async () => {
  const { id, s, w, req } = await awaitingApproval({ limits: { max_queued_turns: 3 } });
  // Five arrive at once: three are admitted, two are refused as they are handled.
  const refused: Array<{ message: string; code: string | undefined }> = [];
  const accepted: string[] = [];
  const results = Array.from({ length: 5 }, (_, i) =>
    s.submit(msg(`q${i}`, undefined, `q-${i}`), () => accepted.push(`q-${i}`), (message, code) => refused.push({ message, code })),
  );
  expect(results.every((r) => r.ok)).toBe(true);
  await w.until(() => accepted.length + refused.length === 5, 5000, 'all five answered');
  expect(accepted).toEqual(['q-0', 'q-1', 'q-2']);
  expect(refused).toHaveLength(2);
  expect(refused.every((r) => r.code === 'busy' && /queue full/.test(r.message))).toBe(true);
  expect(s.descriptor().queued_turns).toBe(3);
  // Now the queue is full at enqueue: answered busy at once, never queued.
  const late = s.submit(msg('late'));
  expect(late).toMatchObject({ ok: false, code: 'busy' });
  expect(!late.ok && late.message).toMatch(/queue full/);
  // A steer joins the running turn and is not bounded by the queue; approval still works.
  expect(s.submit(msg('steer me', 'steer')).ok).toBe(true);
  expect(s.submit(op({ type: 'exec_approval', id: req.approval_id, decision: 'approve' })).ok).toBe(true);
  await w.next('turn_complete', 4, 10_000);
  const events = (await h.host.readAfter(id, 0, 1000)).flatMap((b) => b.events);
  expect(events.some((e) => e.submission_id === 'q-3' || e.submission_id === 'q-4')).toBe(false);
});
