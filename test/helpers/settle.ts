/** Waiting for a session's journal to settle, shared by the kill -9 tests (single node and cluster). */
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
