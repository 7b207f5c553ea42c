/**
 * Host and Origin checks (docs/web.md, docs/protocol.md "Connecting" step 4): a foreign
 * `Host` on any HTTP request and a foreign `Origin` on an upgrade are answered 403, also
 * under --no-auth; the daemon's own origins and configured ones are let through.
 */
import { request } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { connect } from './helpers/client.js';
import { startDaemon, type Daemon } from './helpers/daemon.js';

let d: Daemon;

beforeAll(async () => {
  d = await startDaemon({
    token: null,
    config: {
      approval_policy: 'auto',
      server: { allowed_origins: ['https://ui.example.com'], allowed_hosts: ['agentd.lan', 'proxy.lan:8443'] },
    },
  });
});
afterAll(async () => {
  await d?.stop();
});

/** Status of a GET with the given headers (Node's fetch cannot set Host). */
function get(path: string, headers: Record<string, string>, daemon: Daemon = d): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port: daemon.port, path, headers, agent: false }, (res) => {
      res.resume();
      resolve(res.statusCode ?? 0);
    });
    req.on('error', reject);
    req.end();
  });
}

/** HTTP status of an upgrade with the given headers (101 = accepted). */
function upgrade(headers: Record<string, string>, daemon: Daemon = d): Promise<number> {
  const ws = new WebSocket(daemon.wsUrl, { headers });
  return new Promise((resolve) => {
    ws.on('open', () => {
      ws.close();
      resolve(101);
    });
    ws.on('unexpected-response', (_req, res) => resolve(res.statusCode ?? 0));
    ws.on('error', () => resolve(0));
  });
}

describe('Host', () => {
  it.each([
    [`127.0.0.1:PORT`, 200],
    [`localhost:PORT`, 200],
    [`LOCALHOST:PORT`, 200],
    [`[::1]:PORT`, 200],
    [`localhost`, 200],
    [`agentd.lan:PORT`, 200],
    [`proxy.lan:8443`, 200],
    [`evil.example:PORT`, 403],
    [`evil.example`, 403],
    [`127.0.0.1.evil.example:PORT`, 403],
    [`localhost:1`, 403],
    [`proxy.lan:PORT`, 403],
  ])('GET /healthz with Host %s answers %i', async (host, status) => {
    expect(await get('/healthz', { host: host.replace('PORT', String(d.port)) })).toBe(status);
  });

  it('checks every path, not only /healthz', async () => {
    expect(await get('/nope', { host: 'evil.example' })).toBe(403);
    expect(await get('/v1', { host: 'evil.example' })).toBe(403);
  });

  it('refuses an upgrade with a foreign Host', async () => {
    expect(await upgrade({ host: `evil.example:${d.port}` })).toBe(403);
  });
});

describe('Origin', () => {
  it.each([
    ['http://127.0.0.1:PORT', 101],
    ['http://localhost:PORT', 101],
    ['http://[::1]:PORT', 101],
    ['http://agentd.lan:PORT', 101],
    ['https://ui.example.com', 101],
    ['https://evil.example', 403],
    ['http://localhost:1', 403],
    ['http://127.0.0.1:PORT.evil.example', 403],
    ['null', 403],
    ['https://ui.example.com:444', 403],
  ])('an upgrade with Origin %s answers %i', async (origin, status) => {
    expect(await upgrade({ origin: origin.replace('PORT', String(d.port)) })).toBe(status);
  });

  it('lets clients without an Origin (non-browser) connect, and a refused page never reaches a session', async () => {
    const c = await connect(d);
    expect((await c.request({ type: 'list_sessions' })).type).toBe('sessions');
    await c.close();
    expect(await upgrade({ origin: 'https://evil.example' })).toBe(403);
  });
});

describe('with the default configuration and --no-auth', () => {
  it('refuses a foreign Origin and a foreign Host', async () => {
    const plain = await startDaemon({ token: null });
    try {
      expect(await upgrade({ origin: 'https://evil.example' }, plain)).toBe(403);
      expect(await get('/healthz', { host: 'rebound.evil.example' }, plain)).toBe(403);
      expect((await fetch(`${plain.httpUrl}/healthz`)).status).toBe(200);
    } finally {
      await plain.stop();
    }
  });
});
