/** Waiting for a session's journal to settle, shared by the kill -9 tests (single node and cluster). */
import { expect } from 'vitest';
import type { Frame, TestClient } from './client.js';

/** The event types that end a turn (protocol `isTurnEnd`). */
export const TERMINAL = ['turn_complete', 'turn_interrupted', 'turn_failed'];

/** Attach from sequence 0 and wait until the journal is quiet with every turn ended. */
export async function settle(c: TestClient, sessionId: string, timeoutMs = 20_000): Promise<Frame[]> {
  const attached = await c.attach(sessionId, { after_sequence: 0 });
  // The replay may come in pages: first receive everything up to the head at attach time.
  await c.waitForSequence(sessionId, attached.head_sequence as number, timeoutMs);
  await c.until(
    () => {
      const events = c.batches(sessionId).flatMap((b) => b.events as Frame[]);
      const started = events.filter((e) => e.msg.type === 'turn_started').length;
      const ended = events.filter((e) => TERMINAL.includes(e.msg.type)).length;
      return started > 0 && started === ended ? true : undefined;
    },
    timeoutMs,
    'all turns ended',
  );
  return c.batches(sessionId);
}

/** Sequences 1…n in arrival order, every turn started once and ended once; returns the events. */
export function checkJournal(batches: Frame[]): Frame[] {
  const seqs = batches.map((b) => b.sequence as number);
  expect(seqs).toEqual(seqs.map((_, i) => i + 1));
  const events = batches.flatMap((b) => b.events as Frame[]);
  const open = new Map<string, number>();
  for (const e of events) {
    if (e.msg.type === 'turn_started') {
      expect(open.has(e.msg.turn_id), `turn ${e.msg.turn_id} started twice`).toBe(false);
      open.set(e.msg.turn_id, 0);
    }
    if (TERMINAL.includes(e.msg.type)) {
      expect(open.get(e.turn_id), `turn ${e.turn_id} ended twice or never started`).toBe(0);
      open.set(e.turn_id, 1);
    }
  }
  expect([...open.values()].every((v) => v === 1)).toBe(true);
  return events;
}
