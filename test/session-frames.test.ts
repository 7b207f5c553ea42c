/**
 * No server frame over 4 MiB (docs/configuration.md): batches are split by encoded bytes into
 * consecutive sequences, and an event whose text cannot fit is cut and marked
 * `truncated: true`. Real SessionHost, real SQLite file, a real ModelClient in the seam.
 */
import { expect, test } from 'vitest';
import { LIMITS } from '../protocol/limits.js';
import { EventSchema } from '../protocol/events.js';
import type { ModelChunk, ModelClient } from '../src/model/types.js';
import { msg, openTestHost, Watcher, type Harness } from './helpers/session.js';

let h: Harness | undefined;

/** Replies with `size` characters in deltas of `delta` characters. */
function bigReply(size: number, delta: number, char = 'é'): ModelClient {
  return {
    async *stream(): AsyncGenerator<ModelChunk> {
      for (let sent = 0; sent < size; sent += delta) yield { type: 'text_delta', delta: char.repeat(Math.min(delta, size - sent)) };
      yield { type: 'finish', reason: 'stop' };
    },
  };
}

test('a 5 MiB reply: every batch frame stays within 4 MiB, the full agent_message is cut and marked truncated', async () => {
  // 2.6 M two-byte characters: 5.2 MB of UTF-8, in large deltas.
  h = await openTestHost({ approval_policy: 'auto' }, { modelClient: () => bigReply(2_600_000, 400_000) });
  const id = (await h.host.create({ cwd: h.dir })).session_id;
  const s = (await h.host.open(id))!;
  const w = new Watcher(s);
  s.submit(msg('talk a lot'));
  await w.next('turn_complete', 1, 20_000);
  const stored = (await h.host.readAfter(id, 0, 10_000));
  expect(stored.map((b) => b.sequence)).toEqual(stored.map((_, i) => i + 1));
  for (const b of stored) expect(Buffer.byteLength(b.frame)).toBeLessThanOrEqual(LIMITS.frameMaxBytes);
  // The live stream is the journal, byte for byte.
  expect(w.batches.map((b) => b.frame)).toEqual(stored.slice(1).map((b) => b.frame));
  const events = stored.flatMap((b) => b.events);
  for (const e of events) expect(EventSchema.safeParse(e).success).toBe(true);
  const deltas = events.filter((e) => e.msg.type === 'agent_message_delta');
  expect(deltas.map((e) => (e.msg as { delta: string }).delta).join('').length).toBe(2_600_000);
  expect(deltas.every((e) => e.truncated === undefined)).toBe(true);
  const full = events.find((e) => e.msg.type === 'agent_message')!;
  expect(full.truncated).toBe(true);
  const text = (full.msg as { text: string }).text;
  expect(text.length).toBeGreaterThan(1_000_000);
  expect(text.length).toBeLessThan(2_600_000);
  expect('é'.repeat(text.length)).toBe(text);
  // The turn's own record is intact: the model context keeps the whole reply.
  expect(s.descriptor().status).toBe('idle');
});
