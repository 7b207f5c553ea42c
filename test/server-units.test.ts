/** Unit tests of the daemon's helpers: token checks, loopback hosts, data dir files. */
import { mkdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { IncomingMessage } from 'node:http';
import { afterAll, describe, expect, it } from 'vitest';
import {
  DAEMON_FILE,
  defaultDataDir,
  readDaemonInfo,
  readToken,
  removeDaemonInfo,
  resolveServerToken,
  writeDaemonInfo,
} from '../src/data-dir/data-dir.js';
import { resolveEndpoint } from '../src/client/endpoint.js';
import { authenticate, isLoopbackHost, tokensEqual, upgradeCredentials } from '../src/server/auth.js';
import { wsUrl } from '../src/server/index.js';
import { tempDataDir } from './helpers/daemon.js';

const req = (url: string, headers: Record<string, string> = {}): IncomingMessage =>
  ({ url, headers }) as unknown as IncomingMessage;

describe('auth', () => {
  it('reads Bearer headers and ?token=', () => {
    expect(upgradeCredentials(req('/v1?token=abc', { authorization: 'Bearer xyz' }))).toEqual({
      header: 'xyz',
      query: 'abc',
      malformedHeader: false,
    });
    expect(upgradeCredentials(req('/v1', { authorization: 'Basic Zm9v' })).malformedHeader).toBe(true);
    expect(upgradeCredentials(req('/v1'))).toEqual({ malformedHeader: false });
  });

  it('requires every presented token to match and at least one', () => {
    const none = { malformedHeader: false };
    expect(authenticate('t', none, 't')).toEqual({ ok: true });
    expect(authenticate('t', { ...none, header: 't' }, undefined)).toEqual({ ok: true });
    expect(authenticate('t', { ...none, query: 't' }, 't')).toEqual({ ok: true });
    expect(authenticate('t', none, undefined)).toMatchObject({ ok: false, message: 'missing token' });
    expect(authenticate('t', { ...none, header: 'x' }, 't')).toMatchObject({ ok: false });
    expect(authenticate('t', { ...none, query: 't' }, 'x')).toMatchObject({ ok: false });
    expect(authenticate('t', { malformedHeader: true }, 't')).toMatchObject({ ok: false });
    expect(authenticate(null, none, undefined)).toEqual({ ok: true });
    expect(tokensEqual('abc', 'abc')).toBe(true);
    expect(tokensEqual('abc', 'abcd')).toBe(false);
  });

  it.each([
    ['127.0.0.1', true],
    ['127.1.2.3', true],
    ['::1', true],
    ['[::1]', true],
    ['localhost', true],
    ['::ffff:127.0.0.1', true],
    ['0.0.0.0', false],
    ['::', false],
    ['192.168.1.10', false],
    ['example.com', false],
  ])('isLoopbackHost(%s) = %s', (host, loopback) => {
    expect(isLoopbackHost(host)).toBe(loopback);
  });

  it('formats IPv6 URLs with brackets', () => {
    expect(wsUrl('::1', 7777)).toBe('ws://[::1]:7777');
    expect(wsUrl('127.0.0.1', 1)).toBe('ws://127.0.0.1:1');
  });
});

describe('data dir', () => {
  const dirs: string[] = [];
  afterAll(() => {
    for (const d of dirs) rmSync(d, { recursive: true, force: true });
  });
  const fresh = (): string => {
    const d = tempDataDir('agentd-unit-');
    dirs.push(d);
    return d;
  };

  it('defaults to $AGENTD_HOME, else ~/.local/share/agentd', () => {
    expect(defaultDataDir({ AGENTD_HOME: '/x/y' })).toBe('/x/y');
    expect(defaultDataDir({ HOME: '/home/u' })).toMatch(/\.local\/share\/agentd$/);
  });

  it('generates a token once, keeps it, and lets an explicit one win', () => {
    const dir = fresh();
    const first = resolveServerToken(dir);
    expect(first.source).toBe('generated');
    expect(statSync(join(dir, 'token')).mode & 0o777).toBe(0o600);
    expect(resolveServerToken(dir)).toEqual({ token: first.token, source: 'file' });
    expect(resolveServerToken(dir, 'mine')).toEqual({ token: 'mine', source: 'explicit' });
    expect(readToken(dir)).toBe('mine');
  });

  it('writes, reads and removes daemon.json; finds a live daemon', () => {
    const dir = fresh();
    expect(readDaemonInfo(dir)).toBeNull();
    expect(resolveEndpoint({ dataDir: dir }, {})).toMatchObject({ urlSource: 'default' });
    writeDaemonInfo(dir, { url: 'ws://127.0.0.1:1234', pid: process.pid, auth: true, started_at: 1, version: '0' });
    expect(statSync(join(dir, DAEMON_FILE)).mode & 0o777).toBe(0o600);
    resolveServerToken(dir, 'tok');
    expect(resolveEndpoint({ dataDir: dir }, {})).toMatchObject({ url: 'ws://127.0.0.1:1234', token: 'tok', urlSource: 'daemon.json', daemonAlive: true });
    removeDaemonInfo(dir, process.pid + 1); // not ours: kept
    expect(readDaemonInfo(dir)).not.toBeNull();
    removeDaemonInfo(dir);
    expect(readDaemonInfo(dir)).toBeNull();
    mkdirSync(dir, { recursive: true });
    writeFileSync(join(dir, DAEMON_FILE), '{not json');
    expect(readDaemonInfo(dir)).toBeNull();
  });
});
