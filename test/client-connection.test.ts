/**
 * The protocol client (src/client): handshake, requests, errors, and AgentdClient's
 * reconnect-and-resume with deduplication and gap filling, against an in-process fake
 * server (test/helpers/tui.ts).
 */
import { afterEach, describe, expect, it } from 'vitest';
import type { BatchFrame } from '../protocol/index.js';
import { backoffDelay } from '../src/client/backoff.js';
import { AgentdClient } from '../src/client/client.js';
import { ClientConnection } from '../src/client/connection.js';
import { parseServerFrameLenient } from '../src/client/frames.js';
import { normalizeUrl } from '../src/client/handshake.js';
import { ConnectionError, ServerError } from '../src/client/errors.js';
import { FakeServer, echoTurn, ev, waitFor } from './helpers/tui.js';

let server: FakeServer | undefined;
const clients: { close(): void }[] = [];

afterEach(async () => {
  for (const c of clients.splice(0)) c.close();
  await server?.stop();
  server = undefined;
});

function track<T extends { close(): void }>(c: T): T {
  clients.push(c);
  return c;
}

describe('ClientConnection', () => {
  it('normalises URLs', () => {
    expect(normalizeUrl('ws://127.0.0.1:7777')).toBe('ws://127.0.0.1:7777/v1');
    expect(normalizeUrl('http://h:1/')).toBe('ws://h:1/v1');
    expect(normalizeUrl('127.0.0.1:9')).toBe('ws://127.0.0.1:9/v1');
    expect(normalizeUrl('wss://h/custom')).toBe('wss://h/custom');
  });

  it('keeps frames of a known type that fail validation, with a warning', () => {
    const ok = parseServerFrameLenient(JSON.stringify({ type: 'welcome', protocol: 1, server: 'x' }));
    expect(ok.warning).toBeUndefined();
    const odd = parseServerFrameLenient(JSON.stringify({ type: 'welcome', protocol: 1, server: 'x', extra: 1 }));
    expect(odd.frame?.type).toBe('welcome');
    expect(odd.warning).toMatch(/welcome/);
    expect(parseServerFrameLenient('nope').frame).toBeNull();
  });

  it('says hello, matches answers to requests, and reports server errors', async () => {
    server = await FakeServer.start();
    server.token = 'T';
    server.addSession({ session_id: 'a' });
    const conn = track(await ClientConnection.open({ url: server.url, token: 'T', clientName: 'test/1' }));
    expect(conn.server).toBe('fake/1.0');
    expect(server.received[0]!.frame).toMatchObject({ type: 'hello', protocol: 1, client: 'test/1', token: 'T' });
    const [list, created] = await Promise.all([conn.listSessions(), conn.createSession({})]);
    expect(list.sessions.map((s) => s.session_id)).toEqual(['a']);
    expect(created.session_id).toBe('s2-new');
    const err = await conn.attach('missing').catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ServerError);
    expect((err as ServerError).code).toBe('unknown_session');
    const queued = await conn.submit('a', { id: 'x1', op: { type: 'message', text: 'hi' } });
    expect(queued).toMatchObject({ type: 'queued', submission_id: 'x1' });
  });

  it('fails without retry on a bad token, and with a clear message when nothing listens', async () => {
    server = await FakeServer.start();
    server.token = 'right';
    const bad = await ClientConnection.open({ url: server.url, token: 'wrong' }).catch((e: unknown) => e);
    expect(bad).toBeInstanceOf(ConnectionError);
    expect((bad as ConnectionError).retryable).toBe(false);
    expect((bad as Error).message).toMatch(/unauthorized/);

    const port = server.port;
    await server.stop();
    server = undefined;
    const refused = await ClientConnection.open({ url: `ws://127.0.0.1:${port}` }).catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(ConnectionError);
    expect((refused as ConnectionError).retryable).toBe(true);
    expect((refused as Error).message).toMatch(/connection refused/);
  });

  it('rejects pending requests when the connection drops', async () => {
    server = await FakeServer.start();
    server.addSession({ session_id: 'a' });
    const conn = track(await ClientConnection.open({ url: server.url }));
    const closed = new Promise((r) => conn.events.on('close', r));
    server.dropAll();
    await closed;
    await expect(conn.listSessions()).rejects.toBeInstanceOf(ConnectionError);
  });
});

describe('backoff', () => {
  it('grows exponentially up to the cap, with jitter below the base', () => {
    const o = { initialMs: 100, maxMs: 1000, factor: 2, jitter: 0 };
    expect([1, 2, 3, 4, 5, 6].map((a) => backoffDelay(a, o))).toEqual([100, 200, 400, 800, 1000, 1000]);
    expect(backoffDelay(1, { initialMs: 100, jitter: 0.5 }, () => 1)).toBe(50);
  });
});

describe('AgentdClient', () => {
  const fast = { backoff: { initialMs: 30, maxMs: 100, jitter: 0 } };

  async function setup(batches = 0) {
    server = await FakeServer.start();
    server.addSession({ session_id: 's1' });
    for (let i = 0; i < batches; i++) server.commit('s1', [ev({ type: 'warning', message: `w${i + 1}` })]);
    const client = track(new AgentdClient({ url: server.url, ...fast }));
    const got: BatchFrame[] = [];
    client.events.on('batch', (b) => got.push(b));
    await client.start();
    return { client, got };
  }

  it('replays the last N batches on attach, then streams live', async () => {
    const { client, got } = await setup(5);
    const a = await client.attach('s1', { replayBatches: 3 });
    expect(a.next_before_sequence).toBe(3);
    await waitFor(() => got.length === 3, 'replay');
    server!.commit('s1', [ev({ type: 'warning', message: 'live' })]);
    await waitFor(() => got.length === 4, 'live batch');
    expect(got.map((b) => b.sequence)).toEqual([3, 4, 5, 6]);
    expect(client.lastSequence('s1')).toBe(6);
  });

  it('drops duplicate batches', async () => {
    const { client, got } = await setup(2);
    await client.attach('s1');
    await waitFor(() => got.length === 2, 'replay');
    const s = server!.sessions.get('s1')!;
    server!.sendRaw('s1', s.batches[0]);
    server!.sendRaw('s1', s.batches[1]);
    server!.commit('s1', [ev({ type: 'warning', message: 'x' })]);
    await waitFor(() => got.length === 3, 'third batch');
    await new Promise((r) => setTimeout(r, 50));
    expect(got.map((b) => b.sequence)).toEqual([1, 2, 3]);
  });

  it('fills a gap in the live stream from history', async () => {
    const { client, got } = await setup(1);
    await client.attach('s1');
    await waitFor(() => got.length === 1, 'replay');
    // Commit 2 and 3 without sending them, then send 4 live: the client must fetch 2..3.
    server!.commitSilently('s1', [ev({ type: 'warning', message: 'two' })]);
    server!.commitSilently('s1', [ev({ type: 'warning', message: 'three' })]);
    server!.commit('s1', [ev({ type: 'warning', message: 'four' })]);
    await waitFor(() => got.length === 4, 'gap filled');
    expect(got.map((b) => b.sequence)).toEqual([1, 2, 3, 4]);
    expect(server!.received.some((r) => r.frame.type === 'history' && r.frame.before_sequence === 4)).toBe(true);
  });

  it('reconnects after the server restarts and resumes after the last sequence, without duplicates or gaps', async () => {
    const { client, got } = await setup(0);
    const states: string[] = [];
    client.events.on('state', (s) => states.push(s.kind));
    const resumed: boolean[] = [];
    client.events.on('attached', (_a, r) => resumed.push(r.resumed));
    await client.attach('s1');
    for (const events of echoTurn('one')) server!.commit('s1', events);
    await waitFor(() => got.length === 4, 'first turn');

    await server!.stop();
    // While it is down, more is committed (e.g. the daemon finished a turn before dying).
    for (const events of echoTurn('two', 't2', 'u2')) server!.commitSilently('s1', events);
    await waitFor(() => states.includes('reconnecting'), 'reconnecting state');
    await expect(client.submit('s1', { id: 'z', op: { type: 'message', text: 'x' } })).rejects.toThrow(/reconnecting/);
    await server!.restart();
    await waitFor(() => got.length === 8, 'resumed stream', 5000);
    server!.commit('s1', [ev({ type: 'warning', message: 'after' })]);
    await waitFor(() => got.length === 9, 'live after resume');
    expect(got.map((b) => b.sequence)).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9]);
    const reattach = server!.received.filter((r) => r.frame.type === 'attach');
    expect(reattach.at(-1)!.frame).toMatchObject({ session_id: 's1', after_sequence: 4 });
    expect(resumed).toEqual([false, true]);
    expect(states.at(-1)).toBe('connected');
  });

  it('re-reads the endpoint before reconnecting (a daemon restarted on another port)', async () => {
    server = await FakeServer.start();
    server.addSession({ session_id: 's1' });
    const other = await FakeServer.start();
    other.addSession({ session_id: 's1' });
    let url = server.url;
    const client = track(new AgentdClient({ url, refresh: () => ({ url }), ...fast }));
    await client.start();
    await client.attach('s1');
    url = other.url;
    server.dropAll();
    await waitFor(() => other.connections > 0 && client.connected, 'connected to the other server', 5000);
    await other.stop();
  });

  it('gives up after maxReconnectAttempts', async () => {
    server = await FakeServer.start();
    const client = track(new AgentdClient({ url: server.url, maxReconnectAttempts: 2, ...fast }));
    await client.start();
    const closed = new Promise<string | undefined>((resolve) =>
      client.events.on('state', (s) => {
        if (s.kind === 'closed') resolve(s.error);
      }),
    );
    await server.stop();
    server = undefined;
    expect(await closed).toMatch(/gave up/);
  });
});
