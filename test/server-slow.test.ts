/**
 * Slow clients: a client that stops reading is never dropped, never sent a gap or a
 * reordering, and costs the daemon a bounded amount of memory; when it reads again it is
 * caught up from the journal and gets every batch exactly once, in order.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connect, type Frame, type TestClient } from './helpers/client.js';
import { startDaemon, type Daemon, type Health } from './helpers/daemon.js';

/** One turn streaming ~1 MB of shell output (the default output cap) in many batches. */
const BULK = "!sh head -c 1000000 /dev/zero | tr '\\0' a";
const HWM = 1024 * 1024; // the daemon's default high-water mark

const range = (n: number): number[] => Array.from({ length: n }, (_, i) => i + 1);
const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/** Poll /healthz until stopped; keeps the maxima. */
function watchHealth(d: Daemon) {
  const peak = { rss: 0, bufferedMax: 0, bufferedTotal: 0, behind: 0, connections: Infinity, fallbacks: 0 };
  let running = true;
  let first: Health | undefined;
  const loop = (async () => {
    while (running) {
      const h = await d.healthz();
      first ??= h;
      peak.rss = Math.max(peak.rss, h.rss_bytes);
      peak.bufferedMax = Math.max(peak.bufferedMax, h.buffered_bytes_max);
      peak.bufferedTotal = Math.max(peak.bufferedTotal, h.buffered_bytes_total as number);
      peak.behind = Math.max(peak.behind, h.attachments_catching_up as number);
      peak.connections = Math.min(peak.connections, h.connections);
      peak.fallbacks = h.stream_fallbacks_total as number;
      await sleep(25);
    }
  })();
  return {
    peak,
    async stop() {
      running = false;
      await loop;
      return { ...peak, rssGrowth: peak.rss - (first?.rss_bytes ?? peak.rss) };
    },
  };
}

async function runTurns(c: TestClient, sid: string, n: number, text: string): Promise<void> {
  let last = '';
  for (let i = 0; i < n; i++) last = await c.submitMessage(sid, text);
  await c.waitTurnEnd(sid, last, 60_000);
}

describe('a client that stops reading', () => {
  let d: Daemon;
  beforeAll(async () => {
    d = await startDaemon({ config: { approval_policy: 'auto', limits: { inbox_capacity: 256 } } });
  });
  afterAll(async () => {
    await d?.stop();
  });

  it('bounds daemon memory, is never dropped, and later gets everything in order', async () => {
    const PAUSED = 4;
    const TURNS = 10;
    const reader = await connect(d, { light: true });

    // Warm-up with a reading client only: the memory the stream itself costs the daemon.
    const warm = (await reader.createSession()).session_id as string;
    await reader.attach(warm);
    const w = watchHealth(d);
    await runTurns(reader, warm, TURNS, BULK);
    const baseline = await w.stop();

    const sid = (await reader.createSession()).session_id as string;
    await reader.attach(sid);
    const slow: TestClient[] = [];
    for (let i = 0; i < PAUSED; i++) {
      const c = await connect(d, { light: true });
      await c.attach(sid);
      c.pauseReading();
      slow.push(c);
    }
    const h = watchHealth(d);
    await runTurns(reader, sid, TURNS, BULK);
    await sleep(300);
    const peak = await h.stop();

    const stream = reader.batches(sid);
    const head = stream[stream.length - 1]!.sequence as number;
    expect(stream.map((b) => b.sequence)).toEqual(range(head));
    const streamBytes = stream.reduce((n, b) => n + (b.bytes as number), 0);
    const biggest = Math.max(...stream.map((b) => b.bytes as number));
    expect(streamBytes).toBeGreaterThan(15 * 1024 * 1024);

    // Every paused client fell back to catching up, and what the daemon queued for each
    // stayed within the high-water mark plus one batch.
    expect(peak.behind).toBe(PAUSED);
    expect(peak.connections).toBe(PAUSED + 1);
    expect(peak.bufferedMax).toBeLessThanOrEqual(HWM + biggest + 64 * 1024);
    expect(peak.bufferedTotal).toBeLessThanOrEqual((PAUSED + 1) * (HWM + biggest + 64 * 1024));
    // RSS sanity check: far less than a copy of the stream per paused client.
    expect(peak.rssGrowth).toBeLessThan(Math.max(baseline.rssGrowth, 0) + streamBytes * (PAUSED / 2));

    // Read again: each slow client gets exactly the reader's stream, byte for byte.
    for (const c of slow) c.resumeReading();
    for (const c of slow) {
      await c.waitForSequence(sid, head, 60_000);
      await c.request({ type: 'list_sessions', limit: 1 }); // nothing more is coming
      const got = c.batches(sid);
      expect(got.map((b) => b.sequence)).toEqual(range(head));
      expect(got).toEqual(stream);
    }
    const after = await d.healthz();
    expect(after.attachments_catching_up).toBe(0);
    expect(after.buffered_bytes_max).toBeLessThan(HWM);
    await Promise.all([reader.close(), ...slow.map((c) => c.close())]);
  });
});

describe('a client that reads in fits and starts', () => {
  let d: Daemon;
  beforeAll(async () => {
    // A small high-water mark and page size force many live ↔ catch-up switches.
    d = await startDaemon({
      config: { approval_policy: 'auto', limits: { inbox_capacity: 256 } },
      env: { AGENTD_WS_HIGH_WATER_MARK: String(32 * 1024), AGENTD_WS_PAGE_SIZE: '3' },
    });
  });
  afterAll(async () => {
    await d?.stop();
  });

  it('gets every batch of several sessions exactly once, in order', async () => {
    const reader = await connect(d, { light: true });
    const jerky = await connect(d, { light: true });
    const bulk = (await reader.createSession()).session_id as string;
    const chatty = (await reader.createSession()).session_id as string;
    for (const c of [reader, jerky]) {
      await c.attach(bulk);
      await c.attach(chatty);
    }
    let toggling = true;
    jerky.pauseReading();
    const toggler = (async () => {
      // Stay paused until the daemon has fallen back to catching this client up…
      for (let i = 0; i < 400 && toggling; i++) {
        if (((await d.healthz()).attachments_catching_up as number) > 0) break;
        await sleep(10);
      }
      // …then read in short bursts with long pauses.
      let paused = true;
      while (toggling) {
        paused = !paused;
        if (paused) jerky.pauseReading();
        else jerky.resumeReading();
        await sleep(paused ? 200 : 10);
      }
      jerky.resumeReading();
    })();
    const w = watchHealth(d);
    await Promise.all([
      runTurns(reader, bulk, 6, BULK),
      (async () => {
        for (let i = 0; i < 15; i++) await reader.waitTurnEnd(chatty, await reader.submitMessage(chatty, i % 3 ? `msg ${i}` : '!sleep 100'));
      })(),
    ]);
    toggling = false;
    await toggler;
    const peak = await w.stop();
    expect(peak.behind).toBeGreaterThan(0); // the slow path was taken
    expect((await d.healthz()).stream_fallbacks_total).toBeGreaterThan(0);

    for (const sid of [bulk, chatty]) {
      const want: Frame[] = reader.batches(sid);
      const head = want[want.length - 1]!.sequence as number;
      expect(want.map((b) => b.sequence)).toEqual(range(head));
      await jerky.waitForSequence(sid, head, 60_000);
    }
    await jerky.request({ type: 'list_sessions', limit: 1 });
    for (const sid of [bulk, chatty]) expect(jerky.batches(sid)).toEqual(reader.batches(sid));
    await Promise.all([reader.close(), jerky.close()]);
  });
});
