/**
 * Unauthenticated and slow clients are bounded: a small byte limit and a short deadline
 * before hello (terminated, no 30 s close wait), caps on clients waiting to authenticate
 * and on connections overall, error messages of bounded size, and requests of a client
 * that does not read queued behind the same high-water mark as batches.
 */
import { connect as tcpConnect, type Socket } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { connect, type TestClient } from './helpers/client.js';
import { startDaemon, type Daemon } from './helpers/daemon.js';

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/** A raw TCP socket upgraded to a WebSocket by hand (so the test controls every byte). */
async function rawUpgrade(d: Daemon): Promise<{ socket: Socket; received: () => Buffer; closed: Promise<number> }> {
  const socket = tcpConnect(d.port, '127.0.0.1');
  const chunks: Buffer[] = [];
  const openedAt = Date.now();
  const closed = new Promise<number>((resolve) => socket.on('close', () => resolve(Date.now() - openedAt)));
  socket.on('error', () => undefined);
  await new Promise<void>((resolve, reject) => {
    socket.once('connect', () => {
      socket.write(
        `GET /v1 HTTP/1.1\r\nHost: 127.0.0.1:${d.port}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n` +
          `Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n`,
      );
    });
    socket.on('data', (d: Buffer) => {
      chunks.push(d);
      const text = Buffer.concat(chunks).toString('latin1');
      if (text.includes('\r\n\r\n')) {
        if (text.startsWith('HTTP/1.1 101')) resolve();
        else reject(new Error(`upgrade refused: ${text.split('\r\n')[0]}`));
      }
    });
  });
  return { socket, received: () => Buffer.concat(chunks), closed };
}

/** The header of a masked client text frame announcing `length` payload bytes. */
function frameHeader(length: number): Buffer {
  const h = Buffer.alloc(14);
  h[0] = 0x81;
  h[1] = 0x80 | 127;
  h.writeBigUInt64BE(BigInt(length), 2);
  h.writeUInt32BE(0, 10); // mask key 0: the payload goes as is
  return h;
}

/**
 * Start a 4 MiB frame before hello and send `bytes` of it; resolves with the ms until the
 * daemon closed the socket (-1 when it had not after `waitMs`).
 */
async function partialFrameClosedAfter(d: Daemon, bytes: number, waitMs: number): Promise<number> {
  const raw = await rawUpgrade(d);
  raw.socket.write(frameHeader(4 * 1024 * 1024 - 100));
  raw.socket.write(Buffer.alloc(bytes, 0x20));
  const after = await Promise.race([raw.closed, sleep(waitMs).then(() => -1)]);
  raw.socket.destroy();
  return after;
}

/** Resolves with the HTTP status of a refused upgrade, or 101 when it was accepted. */
function upgradeStatus(d: Daemon): Promise<{ status: number; ws: WebSocket }> {
  const ws = new WebSocket(d.wsUrl);
  return new Promise((resolve) => {
    ws.on('open', () => resolve({ status: 101, ws }));
    ws.on('unexpected-response', (_req, res) => resolve({ status: res.statusCode ?? 0, ws }));
    ws.on('error', () => resolve({ status: 0, ws }));
  });
}

describe('before hello', () => {
  let d: Daemon;
  beforeAll(async () => {
    d = await startDaemon({ config: { server: { auth_deadline_ms: 500, hello_max_bytes: 16 * 1024 } } });
  });
  afterAll(async () => {
    await d?.stop();
  });

  it('terminates a client sending more than hello_max_bytes (a partial 4 MiB frame) at once', async () => {
    const after = await partialFrameClosedAfter(d, 64 * 1024, 5000);
    expect(after).toBeGreaterThan(0);
    expect(after).toBeLessThan(400); // well before the 500 ms deadline
  });

  it('terminates a silent client shortly after the deadline, even if it never answers the close', async () => {
    const raw = await rawUpgrade(d);
    const after = await Promise.race([raw.closed, sleep(10_000).then(() => -1)]);
    expect(after).toBeGreaterThanOrEqual(450);
    expect(after).toBeLessThan(3000);
    const text = raw.received().toString('latin1');
    expect(text).toContain('"code":"protocol"');
    expect(text).toContain('no hello within 500 ms');
  });

  it('closes a raw TCP connection that never sends a request head shortly after the deadline', async () => {
    const socket = tcpConnect(d.port, '127.0.0.1');
    socket.on('error', () => undefined);
    const openedAt = Date.now();
    const closedAfter = await Promise.race([
      new Promise<number>((resolve) => socket.on('close', () => resolve(Date.now() - openedAt))),
      sleep(10_000).then(() => -1),
    ]);
    expect(closedAfter).toBeGreaterThan(0);
    expect(closedAfter).toBeLessThan(3000);
  });

  it('answers an oversize hello with many unknown keys by terminating, not with a huge error', async () => {
    const c = await connect(d, { hello: false });
    const fields: Record<string, number> = {};
    for (let i = 0; i < 300_000; i++) fields[`k${i}`] = 1;
    c.send({ type: 'hello', protocol: 1, token: d.token, ...fields });
    const { code } = await c.closed;
    expect(code).not.toBe(1000);
    for (const f of c.frames) expect(JSON.stringify(f).length).toBeLessThan(2048);
  });

  it('still welcomes a normal client', async () => {
    const c = await connect(d);
    expect((await c.request({ type: 'list_sessions' })).type).toBe('sessions');
    await c.close();
  });
});

describe('with the default configuration', () => {
  let d: Daemon;
  beforeAll(async () => {
    d = await startDaemon();
  });
  afterAll(async () => {
    await d?.stop();
  });

  it('a partial 4 MiB frame before hello is terminated after 64 KiB, not held', async () => {
    const after = await partialFrameClosedAfter(d, 128 * 1024, 4000);
    expect(after).toBeGreaterThan(0);
    expect(after).toBeLessThan(2000);
  });

  it('error messages are bounded: a frame with 300 000 unknown fields gets a short error', async () => {
    const c = await connect(d);
    const fields: Record<string, number> = {};
    for (let i = 0; i < 300_000; i++) fields[`k${i}`] = 1;
    const answer = await c.request({ type: 'list_sessions', ...fields }, 20_000);
    expect(answer).toMatchObject({ type: 'error', code: 'invalid_frame' });
    expect(Buffer.byteLength(answer.message as string)).toBeLessThanOrEqual(1024);
    expect(answer.message).toMatch(/unknown fields "k0", "k1"/);
    expect((await c.request({ type: 'list_sessions' })).type).toBe('sessions');
    await c.close();
  });
});

describe('connection caps', () => {
  it('refuses upgrades over max_unauthenticated with 503 until one authenticates', async () => {
    const d = await startDaemon({ config: { server: { max_unauthenticated: 3 } } });
    try {
      const waiting: TestClient[] = [];
      for (let i = 0; i < 3; i++) waiting.push(await connect(d, { hello: false }));
      const over = await upgradeStatus(d);
      expect(over.status).toBe(503);
      // An authenticated client no longer counts.
      waiting[0]!.send({ type: 'hello', protocol: 1, token: d.token });
      expect((await waiting[0]!.next()).type).toBe('welcome');
      const next = await connect(d);
      expect((await next.request({ type: 'list_sessions' })).type).toBe('sessions');
      await Promise.all([...waiting, next].map((c) => c.close()));
    } finally {
      await d.stop();
    }
  });

  it('refuses connections over max_connections with 503; a freed slot is reused', async () => {
    const d = await startDaemon({ config: { server: { max_connections: 4 } } });
    try {
      const clients: TestClient[] = [];
      for (let i = 0; i < 4; i++) clients.push(await connect(d));
      const over = await upgradeStatus(d);
      expect(over.status).toBe(503);
      await clients.pop()!.close();
      await sleep(100);
      const again = await connect(d);
      expect((await again.request({ type: 'list_sessions' })).type).toBe('sessions');
      await Promise.all([...clients, again].map((c) => c.close()));
    } finally {
      await d.stop();
    }
  });
});

describe('a client that sends many history requests and does not read', () => {
  let d: Daemon;
  beforeAll(async () => {
    d = await startDaemon({ config: { approval_policy: 'auto' } });
  });
  afterAll(async () => {
    await d?.stop();
  });

  it('makes the daemon buffer at most the high-water mark plus one answer; every answer comes later', async () => {
    const c = await connect(d, { light: true, validate: false });
    const sid = (await c.createSession()).session_id as string;
    await c.attach(sid, { replay_batches: 0 });
    // About 3.6 MB of history: one full answer per request.
    for (let i = 0; i < 3; i++) await c.waitTurnEnd(sid, await c.submitMessage(sid, 'y'.repeat(300_000)), 30_000);
    const head = (await c.ok({ type: 'attach', session_id: sid, replay_batches: 0 })).head_sequence as number;

    c.pauseReading();
    const N = 60;
    const requests = Array.from({ length: N }, (_, i) =>
      JSON.stringify({ type: 'history', req_id: `h${i}`, session_id: sid, before_sequence: head + 1 }),
    );
    for (const r of requests) c.send(r);
    let peak = 0;
    for (let i = 0; i < 30; i++) {
      await sleep(50);
      peak = Math.max(peak, (await d.healthz()).buffered_bytes_max);
    }
    expect(peak).toBeGreaterThan(0);
    expect(peak).toBeLessThanOrEqual(1024 * 1024 + 4 * 1024 * 1024 + 256 * 1024);
    c.resumeReading();
    const first = await c.waitFor((f) => f.req_id === 'h0', 60_000, 'history h0');
    expect(first.type).toBe('history');
    expect((first.batches as Array<{ sequence: number }>).at(-1)!.sequence).toBe(head);
    for (let i = 1; i < N; i++) {
      const answer = await c.waitFor((f) => f.req_id === `h${i}`, 60_000, `history h${i}`);
      expect(answer.type).toBe('history');
      expect(answer.batches).toHaveLength((first.batches as unknown[]).length);
      expect(answer.next_before_sequence).toBe(first.next_before_sequence);
    }
    await c.close();
  }, 120_000);
});
