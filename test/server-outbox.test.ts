/**
 * The outbox alone (src/server/outbox.ts), over a real WebSocket pair on loopback: frames
 * go out in order, "full" follows the socket's buffer, drain waiters run once the buffer
 * falls below the low-water mark, one per key, in order, and nothing after close.
 */
import type { AddressInfo, Socket } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import WebSocket, { WebSocketServer } from 'ws';
import { frameSocketOf, Outbox } from '../src/server/outbox.js';

interface Pair {
  server: WebSocket;
  client: WebSocket;
  received: string[];
  outbox: Outbox;
  /** Stop / start reading on the client's TCP socket (the server's writes back up). */
  pause(): void;
  resume(): void;
  close(): Promise<void>;
}

const HWM = 64 * 1024;
const pairs: Pair[] = [];
afterEach(async () => {
  await Promise.all(pairs.splice(0).map((p) => p.close()));
});

async function pair(): Promise<Pair> {
  const wss = new WebSocketServer({ port: 0, host: '127.0.0.1' });
  await new Promise<void>((resolve) => wss.once('listening', () => resolve()));
  const port = (wss.address() as AddressInfo).port;
  const serverSide = new Promise<WebSocket>((resolve) => wss.once('connection', (ws) => resolve(ws)));
  const client = new WebSocket(`ws://127.0.0.1:${port}`, { maxPayload: 0 });
  const received: string[] = [];
  client.on('message', (data: Buffer) => received.push(data.toString('utf8')));
  await new Promise<void>((resolve) => client.once('open', () => resolve()));
  const server = await serverSide;
  const outbox = new Outbox(frameSocketOf(server), HWM);
  const raw = (client as unknown as { _socket: Socket })._socket;
  const p: Pair = {
    server,
    client,
    received,
    outbox,
    pause: () => raw.pause(),
    resume: () => raw.resume(),
    async close() {
      outbox.close();
      client.terminate();
      server.terminate();
      await new Promise<void>((resolve) => wss.close(() => resolve()));
    },
  };
  pairs.push(p);
  return p;
}

const until = async (check: () => boolean, timeoutMs = 10_000): Promise<void> => {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error('timed out');
    await new Promise((r) => setTimeout(r, 5));
  }
};

/** Write 256 KiB frames until the outbox reports full. */
function fill(p: Pair): number {
  const chunk = 'z'.repeat(256 * 1024);
  let n = 0;
  while (!p.outbox.isFull) {
    p.outbox.write(chunk);
    n++;
    if (n > 10_000) throw new Error('never full');
  }
  return n;
}

describe('Outbox', () => {
  it('writes frames in order and is not full while the peer reads', async () => {
    const p = await pair();
    for (let i = 0; i < 100; i++) p.outbox.write(`frame ${i}`);
    p.outbox.write(Buffer.from('bytes too', 'utf8'));
    await until(() => p.received.length === 101);
    expect(p.received.slice(0, 3)).toEqual(['frame 0', 'frame 1', 'frame 2']);
    expect(p.received[100]).toBe('bytes too');
    expect(p.outbox.isFull).toBe(false);
    expect(p.outbox.lowWaterMark).toBe(HWM / 2);
  });

  it('is full once the buffer passes the high-water mark; waiters run after the drain, in order, once per key', async () => {
    const p = await pair();
    p.pause();
    const written = fill(p);
    expect(p.outbox.bufferedAmount).toBeGreaterThanOrEqual(HWM);
    const calls: string[] = [];
    const a = {};
    const b = {};
    p.outbox.whenDrained(a, () => calls.push('a'));
    p.outbox.whenDrained(b, () => calls.push('b'));
    p.outbox.whenDrained(a, () => calls.push('a again')); // same key: keeps the first
    await new Promise((r) => setTimeout(r, 300));
    expect(calls).toEqual([]); // still full: nobody runs
    p.resume();
    await until(() => calls.length === 2);
    expect(calls).toEqual(['a', 'b']);
    expect(p.outbox.bufferedAmount).toBeLessThan(p.outbox.lowWaterMark);
    await until(() => p.received.length === written);
    await new Promise((r) => setTimeout(r, 250));
    expect(calls).toEqual(['a', 'b']); // each ran once
  });

  it('keeps a waiter that fills the outbox again for the next drain, and forgets cancelled ones', async () => {
    const p = await pair();
    p.pause();
    fill(p);
    const calls: string[] = [];
    const refill = {};
    const gone = {};
    let rounds = 0;
    const again = (): void => {
      calls.push(`refill ${++rounds}`);
      if (rounds < 3) {
        fill(p);
        p.outbox.whenDrained(refill, again);
      }
    };
    p.outbox.whenDrained(refill, again);
    p.outbox.whenDrained(gone, () => calls.push('cancelled'));
    p.outbox.cancel(gone);
    p.resume();
    await until(() => rounds === 3);
    expect(calls).toEqual(['refill 1', 'refill 2', 'refill 3']);
  });

  it('drops writes and waiters after close', async () => {
    const p = await pair();
    p.pause();
    fill(p);
    const calls: string[] = [];
    p.outbox.whenDrained({}, () => calls.push('x'));
    p.outbox.close();
    expect(p.outbox.isOpen).toBe(false);
    const before = p.outbox.bufferedAmount;
    p.outbox.write('after close');
    expect(p.outbox.bufferedAmount).toBe(before);
    p.outbox.whenDrained({}, () => calls.push('y'));
    p.resume();
    await new Promise((r) => setTimeout(r, 300));
    expect(calls).toEqual([]);
    expect(p.received).not.toContain('after close');
  });
});
