/** The Host/Origin check alone (src/server/request-guard.ts), on plain request heads. */
import type { IncomingMessage } from 'node:http';
import { describe, expect, it } from 'vitest';
import { checkRequest, normalizeOrigin, type RequestPolicy } from '../src/server/request-guard.js';

const req = (headers: Record<string, string>): IncomingMessage => ({ headers }) as unknown as IncomingMessage;
const policy = (over: Partial<RequestPolicy> = {}): RequestPolicy => ({
  bindHost: '127.0.0.1',
  port: 7777,
  allowedHosts: [],
  allowedOrigins: [],
  ...over,
});
const ok = (headers: Record<string, string>, p = policy()): boolean => checkRequest(req(headers), p) === null;

describe('checkRequest: Host', () => {
  it('accepts the bind host, localhost and the loopback literals at the real port or without one', () => {
    for (const host of ['127.0.0.1:7777', 'localhost:7777', 'LocalHost:7777', '[::1]:7777', 'localhost', '127.0.0.1']) {
      expect(ok({ host }), host).toBe(true);
    }
  });

  it('refuses other names, other ports, a missing or malformed Host', () => {
    for (const host of ['evil.example:7777', 'localhost:7778', '127.0.0.1:80', 'localhost.evil:7777', 'a b', 'x@localhost:7777', '']) {
      expect(ok({ host }), host).toBe(false);
    }
    expect(ok({})).toBe(false);
    expect(checkRequest(req({ host: 'evil.example' }), policy())).toMatchObject({ status: 403 });
  });

  it('takes the bind host as configured (a name, an IPv6 literal)', () => {
    expect(ok({ host: 'myhost:7777' }, policy({ bindHost: 'myhost' }))).toBe(true);
    expect(ok({ host: '[::1]:7777' }, policy({ bindHost: '::1' }))).toBe(true);
    expect(ok({ host: '[fd00::5]:7777' }, policy({ bindHost: 'fd00::5' }))).toBe(true);
    expect(ok({ host: '192.168.1.5:7777' }, policy({ bindHost: '192.168.1.5' }))).toBe(true);
  });

  it('takes every local address as the bind address of a wildcard bind, and nothing else', () => {
    const wild = policy({ bindHost: '0.0.0.0', localAddresses: () => ['127.0.0.1', '192.168.1.5'] });
    expect(ok({ host: '192.168.1.5:7777' }, wild)).toBe(true);
    expect(ok({ host: '192.168.1.5:7777', origin: 'http://192.168.1.5:7777' }, wild)).toBe(true);
    expect(ok({ host: '192.168.1.6:7777' }, wild)).toBe(false);
    expect(ok({ host: 'rebound.example:7777' }, wild)).toBe(false);
    const wild6 = policy({ bindHost: '::', localAddresses: () => ['fd00::5', '10.0.0.2'] });
    expect(ok({ host: '[fd00::5]:7777' }, wild6)).toBe(true);
    expect(ok({ host: '10.0.0.2:7777' }, wild6)).toBe(true);
    expect(ok({ host: '192.168.1.5:7777' }, policy({ bindHost: '127.0.0.1', localAddresses: () => ['192.168.1.5'] }))).toBe(false);
    // The real interfaces: loopback is always among them.
    expect(ok({ host: '127.0.0.1:7777' }, policy({ bindHost: '0.0.0.0' }))).toBe(true);
  });

  it('accepts allowed_hosts: a name at any port, name:port only at that port', () => {
    const p = policy({ allowedHosts: ['agentd.lan', 'Proxy.lan:443'] });
    expect(ok({ host: 'agentd.lan:7777' }, p)).toBe(true);
    expect(ok({ host: 'agentd.lan:9' }, p)).toBe(true);
    expect(ok({ host: 'proxy.lan:443' }, p)).toBe(true);
    expect(ok({ host: 'proxy.lan:444' }, p)).toBe(false);
  });
});

describe('checkRequest: Origin', () => {
  const host = '127.0.0.1:7777';
  it('accepts no Origin and the daemon own origins', () => {
    expect(ok({ host })).toBe(true);
    for (const origin of ['http://127.0.0.1:7777', 'http://localhost:7777', 'HTTP://LOCALHOST:7777', 'http://[::1]:7777']) {
      expect(ok({ host, origin }), origin).toBe(true);
    }
  });

  it('refuses foreign origins, other ports and schemes, and "null"', () => {
    for (const origin of ['https://evil.example', 'http://localhost:7778', 'https://localhost:7777', 'null', 'garbage', 'http://127.0.0.1:7777.evil.example']) {
      expect(ok({ host, origin }), origin).toBe(false);
    }
  });

  it('accepts allowed_origins (normalized) and http origins of allowed hosts at the real port', () => {
    const p = policy({ allowedOrigins: ['https://UI.example.com:443', 'null'], allowedHosts: ['agentd.lan'] });
    expect(ok({ host, origin: 'https://ui.example.com' }, p)).toBe(true);
    expect(ok({ host, origin: 'null' }, p)).toBe(true);
    expect(ok({ host, origin: 'http://agentd.lan:7777' }, p)).toBe(true);
    expect(ok({ host, origin: 'http://agentd.lan:8080' }, p)).toBe(false);
    expect(normalizeOrigin('https://A.example:443')).toBe('https://a.example');
  });
});
