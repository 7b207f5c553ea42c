/** Unit tests of the daemon's helpers: token checks, loopback hosts, data dir files, error frames, pages. */
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
import { parseConfig } from '../src/config/config.js';
import { authenticate, isLoopbackHost, tokensEqual, upgradeCredentials } from '../src/server/auth.js';
import { boundedMessage, errorFrame, LIMITS } from '../protocol/index.js';
import { wsUrl } from '../src/server/index.js';
import { historyPage, readHistory, sessionsPage } from '../src/server/pages.js';
import type { CommittedBatch } from '../src/session/api.js';
import type { SessionDescriptor } from '../protocol/index.js';
import { tempDataDir } from './helpers/daemon.js';
import { disposeHarness, msg, openHost, Watcher } from './helpers/session.js';

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

  it('refuses a repeated ?token= parameter', () => {
    const creds = upgradeCredentials(req('/v1?token=t&token=t'));
    expect(creds).toMatchObject({ query: 't', repeatedQuery: true });
    expect(authenticate('t', creds, 't')).toMatchObject({ ok: false, message: expect.stringMatching(/once/) });
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

describe('error frames', () => {
  it('bound the message to LIMITS.errorMessageMaxBytes at a character boundary', () => {
    expect(errorFrame('invalid_frame', 'short')).toEqual({ type: 'error', code: 'invalid_frame', message: 'short' });
    for (const unit of ['k', '€', '😀']) {
      const message = boundedMessage(unit.repeat(100_000));
      expect(Buffer.byteLength(message)).toBeLessThanOrEqual(LIMITS.errorMessageMaxBytes);
      expect(message).toMatch(/… \(cut\)$/);
      expect(message).not.toContain('\uFFFD');
    }
  });
});

describe('pages', () => {
  const descriptor = (id: string, padding: number): SessionDescriptor =>
    ({ session_id: id, title: 'p'.repeat(padding) }) as unknown as SessionDescriptor;
  const batch = (sequence: number, bytes: number): CommittedBatch => ({
    session_id: 's',
    sequence,
    committed_at: 1,
    events: [],
    frame: JSON.stringify({ type: 'batch', session_id: 's', sequence, pad: '€'.repeat(Math.floor(bytes / 3)) }),
  });

  it('cut list_sessions by encoded bytes; next_before continues after the last one sent', () => {
    const all = ['a', 'b', 'c', 'd', 'e'].map((id) => descriptor(id, 300));
    const whole = sessionsPage('r', all, 'e');
    expect(JSON.parse(whole.text)).toMatchObject({ type: 'sessions', req_id: 'r', next_before: 'e' });
    expect(whole.included).toBe(5);
    const cut = sessionsPage('r', all, 'e', 1000);
    expect(Buffer.byteLength(cut.text)).toBeLessThanOrEqual(1000);
    const frame = JSON.parse(cut.text) as { sessions: SessionDescriptor[]; next_before: string };
    expect(frame.sessions.map((s) => s.session_id)).toEqual(['a', 'b']);
    expect(frame.next_before).toBe('b');
    expect(sessionsPage('r', all, null).text).toMatch(/"next_before":null}$/);
  });

  it('leave out a descriptor that fits no frame, and go on', () => {
    const page = sessionsPage('r', [descriptor('a', 10), descriptor('huge', 5000), descriptor('c', 10)], null, 2000);
    expect(page.left_out).toEqual(['huge']);
    expect((JSON.parse(page.text) as { sessions: SessionDescriptor[] }).sessions.map((s) => s.session_id)).toEqual(['a', 'c']);
  });

  it('cut history to the newest batches that fit in UTF-8 bytes', () => {
    const batches = [1, 2, 3, 4, 5].map((n) => batch(n, 3000));
    const page = historyPage('r', 's', batches, 10_000);
    expect(page.ok).toBe(true);
    if (!page.ok) return;
    expect(Buffer.byteLength(page.text)).toBeLessThanOrEqual(10_000);
    const frame = JSON.parse(page.text) as { batches: Array<{ sequence: number }>; next_before_sequence: number | null };
    expect(frame.batches.map((b) => b.sequence)).toEqual([3, 4, 5]);
    expect(frame.next_before_sequence).toBe(3);
    const all = historyPage('r', 's', batches);
    expect(all.ok && JSON.parse(all.text).next_before_sequence).toBeNull();
    expect(historyPage('r', 's', [])).toMatchObject({ ok: true, included: 0 });
    expect(historyPage('r', 's', batches, 2000)).toEqual({ ok: false, sequence: 5 });
  });
});

describe('readHistory', () => {
  it('reads only about one frame of batches, newest first, whatever the limit', async () => {
    const h = await openHost({ approval_policy: 'auto' });
    try {
      const id = (await h.host.create({})).session_id;
      const session = (await h.host.open(id))!;
      const w = new Watcher(session);
      for (let i = 0; i < 4; i++) {
        session.submit(msg('q'.repeat(50_000)));
        await w.until((ev) => ev.filter((e) => e.msg.type === 'turn_complete').length > i, 10_000, 'turn end');
      }
      const head = session.headSequence();
      let read = 0;
      const counting = {
        readBefore: async (sid: string, before: number, limit: number) => {
          const page = (await h.host.readBefore(sid, before, limit));
          read += page.length;
          return page;
        },
      };
      const all = await readHistory(counting, id, head + 1, 1000, 1 << 30);
      expect(all.map((b) => b.sequence)).toEqual(Array.from({ length: head }, (_, i) => i + 1));
      read = 0;
      const some = await readHistory(counting, id, head + 1, 1000, 120_000);
      const bytes = some.reduce((n, b) => n + Buffer.byteLength(b.frame), 0);
      expect(bytes).toBeGreaterThan(120_000); // enough to fill the page…
      expect(read).toBeLessThan(head); // …without reading the whole journal
      expect(some.at(-1)!.sequence).toBe(head);
      expect(some.map((b) => b.sequence)).toEqual(Array.from({ length: some.length }, (_, i) => head - some.length + 1 + i));
      expect((await readHistory(counting, id, 3, 1000)).map((b) => b.sequence)).toEqual([1, 2]);
      expect((await readHistory(counting, id, head + 1, 2)).map((b) => b.sequence)).toEqual([head - 1, head]);
    } finally {
      await disposeHarness(h);
    }
  });
});

describe('config: the server block', () => {
  it('has defaults and names a bad field', () => {
    expect(parseConfig({}).server).toEqual({
      allowed_origins: [],
      allowed_hosts: [],
      max_connections: 512,
      max_unauthenticated: 128,
      auth_deadline_ms: 5000,
      hello_max_bytes: 65536,
      metrics_public: false,
    });
    expect(parseConfig({ server: { allowed_origins: ['https://ui.example.com:8443', 'null'] } }).server.allowed_origins).toHaveLength(2);
    expect(() => parseConfig({ server: { allowed_origins: ['https://ui.example.com/path'] } })).toThrow(/server\.allowed_origins\.0/);
    expect(() => parseConfig({ server: { allowed_hosts: ['a b'] } })).toThrow(/server\.allowed_hosts\.0/);
    expect(() => parseConfig({ server: { max_connections: 0 } })).toThrow(/server\.max_connections/);
    expect(() => parseConfig({ server: { hello_max_bytes: 10 } })).toThrow(/server\.hello_max_bytes/);
    expect(() => parseConfig({ server: { colour: 1 } })).toThrow(/server/);
  });
});
