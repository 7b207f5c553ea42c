/**
 * No server frame over 4 MiB (docs/configuration.md): `list_sessions` and `history` answers are
 * cut by encoded bytes, and their cursors (`next_before`, `next_before_sequence`) page
 * through everything exactly once.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LIMITS } from '../protocol/index.js';
import { connect, type Frame, type TestClient } from './helpers/client.js';
import { startDaemon, type Daemon } from './helpers/daemon.js';

let d: Daemon;
let c: TestClient;
/** UTF-8 bytes of every text frame received, in order. */
const frameBytes: number[] = [];

beforeAll(async () => {
  d = await startDaemon({ config: { approval_policy: 'ask' } });
  c = await connect(d);
  c.ws.on('message', (data: Buffer) => frameBytes.push(data.length));
});
afterAll(async () => {
  await c?.close();
  await d?.stop();
});

describe('list_sessions', () => {
  it('pages sessions whose pending approvals carry big arguments in frames of at most 4 MiB', async () => {
    const big = 'x'.repeat(900_000);
    const ids: string[] = [];
    for (let i = 0; i < 6; i++) {
      const sid = (await c.createSession({ approval_policy: 'ask' })).session_id as string;
      await c.attach(sid);
      await c.submitMessage(sid, `!sh echo ${big}`);
      await c.waitForEvent(sid, (m) => m.type === 'exec_approval_request', 20_000);
      ids.push(sid);
    }
    const seen: string[] = [];
    let before: string | undefined;
    let pages = 0;
    for (;;) {
      const mark = frameBytes.length;
      const page = await c.ok({ type: 'list_sessions', limit: 50, ...(before !== undefined && { before }) }, 20_000);
      pages++;
      const size = Math.max(...frameBytes.slice(mark));
      expect(size).toBeLessThanOrEqual(LIMITS.frameMaxBytes);
      const sessions = page.sessions as Frame[];
      expect(sessions.length).toBeGreaterThan(0);
      seen.push(...sessions.map((s) => s.session_id as string));
      if (page.next_before === null) break;
      before = page.next_before as string;
    }
    expect(pages).toBeGreaterThan(1);
    // Newest first, each exactly once.
    expect(seen).toEqual([...ids].reverse());
    const withApproval = await c.ok({ type: 'list_sessions', limit: 1 });
    expect((withApproval.sessions as Frame[])[0]!.pending_approval.arguments.command).toHaveLength(big.length + 5);
  }, 120_000);
});

describe('history', () => {
  it('pages multi-byte batches in frames of at most 4 MiB and returns every batch once', async () => {
    const sid = (await c.createSession({ approval_policy: 'auto' })).session_id as string;
    await c.attach(sid, { replay_batches: 0 });
    const text = '€'.repeat(340_000); // 1 020 000 bytes, 340 000 UTF-16 units
    for (let i = 0; i < 3; i++) await c.waitTurnEnd(sid, await c.submitMessage(sid, text), 30_000);
    const head = (await c.ok({ type: 'attach', session_id: sid, replay_batches: 0 })).head_sequence as number;

    const seen: number[] = [];
    let before = head + 1;
    let pages = 0;
    for (;;) {
      const mark = frameBytes.length;
      const page = await c.ok({ type: 'history', session_id: sid, before_sequence: before }, 20_000);
      pages++;
      expect(Math.max(...frameBytes.slice(mark))).toBeLessThanOrEqual(LIMITS.frameMaxBytes);
      const batches = page.batches as Frame[];
      expect(batches.length).toBeGreaterThan(0);
      seen.unshift(...batches.map((b) => b.sequence as number));
      if (page.next_before_sequence === null) break;
      expect(page.next_before_sequence).toBe(batches[0]!.sequence);
      before = page.next_before_sequence as number;
    }
    expect(pages).toBeGreaterThan(1);
    expect(seen).toEqual(Array.from({ length: head }, (_, i) => i + 1));
  }, 120_000);
});
