/** Protocol v1 handshake: hello/welcome, tokens (hello, header, query), 4401 and 4400. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { connect, TestClient } from './helpers/client.js';
import { startDaemon, type Daemon } from './helpers/daemon.js';

let d: Daemon;

beforeAll(async () => {
  d = await startDaemon();
});
afterAll(async () => {
  await d?.stop();
});

describe('hello and tokens', () => {
  it('welcomes a client with the token in hello', async () => {
    const c = await connect(d, { hello: false });
    c.send({ type: 'hello', protocol: 1, client: 'test/1', token: d.token });
    const welcome = await c.next();
    expect(welcome).toEqual({ type: 'welcome', protocol: 1, server: expect.stringMatching(/^agentd\/\d+\.\d+\.\d+/) });
    await c.close();
  });

  it.each(['header', 'query'] as const)('accepts the token given at upgrade (%s)', async (via) => {
    const c = await connect(d, { via });
    const answer = await c.request({ type: 'list_sessions' });
    expect(answer.type).toBe('sessions');
    expect(c.invalid).toEqual([]);
    await c.close();
  });

  it('accepts the same token given twice (header and hello)', async () => {
    const c = await connect(d, { via: 'header', helloFields: { token: d.token } });
    expect((await c.request({ type: 'list_sessions' })).type).toBe('sessions');
    await c.close();
  });

  const refused: Array<[string, Parameters<typeof connect>[1], Record<string, unknown>]> = [
    ['a wrong token in hello', { hello: false }, { token: 'not-the-token' }],
    ['a missing token', { hello: false, token: null }, {}],
    ['a wrong token in the header', { hello: false, via: 'header', token: 'nope' }, {}],
    ['a wrong token in the query', { hello: false, via: 'query', token: 'nope' }, {}],
    ['a right hello token but a wrong header token', { hello: false, via: 'header', token: 'nope' }, { token: 'RIGHT' }],
  ];
  it.each(refused)('refuses %s with unauthorized and close 4401', async (_what, opts, fields) => {
    const c = await connect(d, opts);
    const token = fields.token === 'RIGHT' ? d.token : fields.token;
    c.send({ type: 'hello', protocol: 1, ...(token !== undefined && { token }) });
    const err = await c.next();
    expect(err).toMatchObject({ type: 'error', code: 'unauthorized' });
    expect((await c.closed).code).toBe(4401);
  });

  it('refuses a repeated ?token= parameter with unauthorized and close 4401', async () => {
    const t = encodeURIComponent(d.token!);
    for (const query of [`token=${t}&token=${t}`, `token=${t}&token=wrong`, `token=wrong&token=${t}`]) {
      const ws = new WebSocket(`${d.wsUrl}?${query}`);
      const c = new TestClient(ws, true);
      await new Promise((resolve) => ws.once('open', resolve));
      c.send({ type: 'hello', protocol: 1, client: 'test/1' });
      expect(await c.next()).toMatchObject({ type: 'error', code: 'unauthorized', message: expect.stringMatching(/once/) });
      expect((await c.closed).code).toBe(4401);
    }
  });

  it('does not serve an unauthorized client before closing', async () => {
    const c = await connect(d, { hello: false, token: null });
    c.send({ type: 'hello', protocol: 1, token: 'wrong' });
    c.send({ type: 'list_sessions', req_id: 'sneaky' });
    await c.closed;
    expect(c.frames.map((f) => f.type)).toEqual(['error']);
  });
});

describe('protocol errors close with 4400', () => {
  const firstFrames: Array<[string, string | Buffer]> = [
    ['a non-hello first frame', JSON.stringify({ type: 'list_sessions', req_id: 'r1' })],
    ['protocol 2', JSON.stringify({ type: 'hello', protocol: 2, token: 'T' })],
    ['protocol 0', JSON.stringify({ type: 'hello', protocol: 0, token: 'T' })],
    ['invalid JSON', '{"type":"hello",'],
    ['a hello with an unknown field', JSON.stringify({ type: 'hello', protocol: 1, token: 'T', extra: 1 })],
    ['a binary frame', Buffer.from(JSON.stringify({ type: 'hello', protocol: 1, token: 'T' }))],
  ];
  it.each(firstFrames)('%s', async (_what, frame) => {
    const c = await connect(d, { hello: false, token: null });
    const text = typeof frame === 'string' ? frame.replace('"T"', JSON.stringify(d.token)) : frame;
    c.ws.send(text);
    const err = await c.next();
    expect(err).toMatchObject({ type: 'error', code: 'protocol' });
    expect((await c.closed).code).toBe(4400);
  });
});

describe('after welcome', () => {
  it('answers a second hello with invalid_frame and stays usable', async () => {
    const c = await connect(d);
    c.send({ type: 'hello', protocol: 1, token: d.token });
    expect(await c.next()).toMatchObject({ type: 'error', code: 'invalid_frame' });
    expect((await c.request({ type: 'list_sessions' })).type).toBe('sessions');
    await c.close();
  });
});

describe('HTTP', () => {
  it('serves /healthz', async () => {
    const res = await fetch(`${d.httpUrl}/healthz`);
    expect(res.status).toBe(200);
    const body = (await res.json()) as Record<string, unknown>;
    expect(body).toMatchObject({ ok: true, pid: d.pid, sessions_resident: expect.any(Number) });
  });

  it('reports the shared journal writer and the WAL checkpoints in /healthz', async () => {
    const body = (await (await fetch(`${d.httpUrl}/healthz`)).json()) as { journal: Record<string, Record<string, unknown>> };
    expect(body.journal.writer).toMatchObject({ ticks: expect.any(Number), writes: expect.any(Number), max_tick_ms: expect.any(Number) });
    expect(body.journal.checkpoint).toMatchObject({ runs: expect.any(Number), wal_frames: expect.any(Number), behind: false, last_error: null });
  });

  it('answers 404 elsewhere', async () => {
    expect((await fetch(`${d.httpUrl}/nope`)).status).toBe(404);
  });

  it('refuses a WebSocket upgrade outside /v1', async () => {
    const ws = new WebSocket(`${d.url}/v2`);
    const status = await new Promise<number | undefined>((resolve) => {
      ws.on('unexpected-response', (_req, res) => resolve(res.statusCode));
      ws.on('error', () => resolve(undefined));
    });
    expect(status).toBe(404);
  });
});

describe('hello timeout', () => {
  it('closes a silent connection with protocol / 4400', async () => {
    const quick = await startDaemon({ env: { AGENTD_HELLO_TIMEOUT_MS: '300' } });
    try {
      const c = await connect(quick, { hello: false });
      expect(await c.next(5000)).toMatchObject({ type: 'error', code: 'protocol', message: expect.stringMatching(/hello/) });
      expect((await c.closed).code).toBe(4400);
    } finally {
      await quick.stop();
    }
  });
});
