/**
 * The notifier against a real local HTTP receiver (docs/sessions.md#notifications): a
 * failed POST is retried (a 500, then success), a refusal is not, the queue stays bounded
 * while the receiver hangs (the oldest dropped and counted), and the payload of events.
 */
import { afterEach, describe, expect, test } from 'vitest';
import { Notifier, redactUrl } from '../src/notify/notifier.js';
import { encodeNotification, oneLine, payloadOf, signature, type NotificationPayload } from '../src/notify/payload.js';
import { startReceiver, type Receiver } from './helpers/receiver.js';

let receivers: Receiver[] = [];
let notifiers: Notifier[] = [];
afterEach(async () => {
  for (const n of notifiers) n.close();
  for (const r of receivers) await r.close();
  receivers = [];
  notifiers = [];
});

interface Logged {
  level: string;
  fields: Record<string, unknown>;
  message: string;
}

async function setup(fallback: 200 | 500 | 'hang', options: { capacity?: number; firstRetryMs?: number; maxAttempts?: number } = {}) {
  const r = await startReceiver(fallback);
  receivers.push(r);
  const logs: Logged[] = [];
  const log = {
    warn: (fields: Record<string, unknown>, message: string) => logs.push({ level: 'warn', fields, message }),
    debug: (fields: Record<string, unknown>, message: string) => logs.push({ level: 'debug', fields, message }),
  };
  const n = new Notifier({ config: { url: r.url, events: ['approval'], format: 'json' }, log, firstRetryMs: 50, ...options });
  notifiers.push(n);
  return { r, n, logs };
}

const payload = (i: number): NotificationPayload => ({
  event: 'turn_complete',
  session_id: `s${i}`,
  title: null,
  parent_session_id: null,
  turn_id: `t${i}`,
  summary: `reply ${i}`,
  url: null,
  ts: i,
});

async function until(cond: () => boolean, what: string, ms = 10_000): Promise<void> {
  const end = Date.now() + ms;
  while (!cond()) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((res) => setTimeout(res, 10));
  }
}

describe('the notifier', () => {
  test('a 500 is retried with the same body; the first retry comes within 5 s at the default backoff', async () => {
    const { r, n, logs } = await setup(200, { firstRetryMs: undefined });
    r.answers = [500];
    n.enqueue(payload(1));
    const [first, second] = await r.waitFor(2, 10_000);
    expect(second!.body).toBe(first!.body);
    expect(second!.at - first!.at).toBeLessThan(5000);
    await until(() => n.delivered === 1, 'delivery');
    expect(logs.find((l) => l.level === 'warn')).toMatchObject({ message: 'notification failed: retrying', fields: { attempt: 1, error: 'HTTP 500' } });
    // The logged URL has no query (a token may live there).
    expect(logs.find((l) => l.level === 'warn')!.fields.url).toBe(redactUrl(r.url));
    expect(String(logs.find((l) => l.level === 'warn')!.fields.url)).not.toContain('topic');
  });

  test('a receiver that keeps failing is given up on after the last attempt; a 4xx is not retried', async () => {
    const { r, n, logs } = await setup(500, { maxAttempts: 3 });
    n.enqueue(payload(1));
    await until(() => n.failed === 1, 'giving up');
    expect(r.requests).toHaveLength(3);
    expect(logs.at(-1)).toMatchObject({ level: 'warn', message: 'notification failed: giving up' });
    r.fallback = 404;
    n.enqueue(payload(2));
    await until(() => n.failed === 2, 'the refusal');
    expect(r.requests).toHaveLength(4);
  });

  test('while the receiver hangs the queue stays bounded: the oldest are dropped and counted, the newest delivered', async () => {
    const { r, n, logs } = await setup('hang', { capacity: 4 });
    for (let i = 0; i < 50; i++) n.enqueue(payload(i));
    expect(n.pending).toBe(4);
    expect(n.dropped).toBe(46);
    expect(logs.filter((l) => l.message.startsWith('notification queue full'))).toHaveLength(1); // logged once per minute, not per drop
    await r.waitFor(1);
    r.fallback = 200;
    r.release();
    await until(() => n.pending === 0, 'the queue to drain');
    // The one in flight (the first) and the newest three.
    expect(r.requests.map((q) => JSON.parse(q.body).session_id)).toEqual(['s0', 's47', 's48', 's49']);
  });

  test('close aborts the POST in flight and drops what waits', async () => {
    const { r, n } = await setup('hang');
    n.enqueue(payload(1));
    n.enqueue(payload(2));
    await r.waitFor(1);
    n.close();
    expect(n.pending).toBe(0);
    n.enqueue(payload(3));
    expect(n.pending).toBe(0);
  });
});

describe('notification payloads', () => {
  const facts = { title: 'fix the build', parent_session_id: null };
  const wanted = new Set(['approval', 'turn_complete', 'turn_failed'] as const);
  const event = (msg: Record<string, unknown>) => ({ msg, ts: 1, turn_id: 't1' }) as never;

  test('an approval names the tool and its call in one line; control characters are removed', () => {
    const p = payloadOf('s1', event({ type: 'exec_approval_request', approval_id: 'a1', call_id: 'c1', tool: 'shell', arguments: { command: 'echo \x1b[31mred\nsecond line' }, cwd: '/' }), facts, wanted, 'http://h:1');
    expect(p).toMatchObject({ event: 'approval', tool: 'shell', approval_id: 'a1', summary: 'echo red', url: 'http://h:1/#session=s1', title: 'fix the build' });
  });

  test('a subagent\'s turn end does not notify, its approval does; unwanted events do not', () => {
    const child = { title: null, parent_session_id: 'p1' };
    const done = event({ type: 'turn_complete', last_message: 'ok', model_calls: 1, tool_calls: 0, failed_tool_calls: 0, usage: {}, duration_ms: 1 });
    expect(payloadOf('c1', done, child, wanted, null)).toBeNull();
    expect(payloadOf('s1', done, facts, new Set(['approval'] as const), null)).toBeNull();
    expect(payloadOf('s1', done, facts, wanted, null)).toMatchObject({ event: 'turn_complete', summary: 'ok' });
    const ask = event({ type: 'exec_approval_request', approval_id: 'a1', call_id: 'c1', tool: 'write_file', arguments: { path: 'x.txt', content: 'abc' }, cwd: '/' });
    expect(payloadOf('c1', ask, child, wanted, null)).toMatchObject({ parent_session_id: 'p1', summary: 'x.txt (3 chars)' });
  });

  test('a failed turn carries its error code; long summaries are cut', () => {
    const failed = event({ type: 'turn_failed', error: { code: 'unauthorized', message: 'the provider refused the credentials' } });
    expect(payloadOf('s1', failed, facts, wanted, null)).toMatchObject({ event: 'turn_failed', error_code: 'unauthorized', summary: 'the provider refused the credentials' });
    expect(oneLine('x'.repeat(500))).toHaveLength(200);
  });

  test('the signature is the hex HMAC-SHA256 of the raw body; ntfy headers are plain ASCII', () => {
    const json = encodeNotification(payload(1), 'json', 'k');
    expect(json.headers['x-agentd-signature']).toBe(signature(json.body, 'k'));
    // The published HMAC-SHA256 test value.
    expect(signature('The quick brown fox jumps over the lazy dog', 'key')).toBe('sha256=f7bc83f430538424b13298e6aa6fb143ef4d59a14946175997479dbc2d1a3cd8');
    expect(signature('a', 'k')).not.toBe(signature('b', 'k'));
    const ntfy = encodeNotification({ ...payload(1), title: 'é\r\nInjected: x' }, 'ntfy', undefined);
    expect(ntfy.headers.title).toBe('Turn complete: ???Injected: x');
    expect(ntfy.headers['x-agentd-signature']).toBeUndefined();
  });
});

describe('the notify config and the observers', () => {
  test('notify needs an http(s) url; events and format are checked; the defaults', async () => {
    const { parseConfig } = await import('../src/config/config.js');
    expect(parseConfig({ notify: { url: 'https://ntfy.sh/t' } }).notify).toEqual({ url: 'https://ntfy.sh/t', events: ['approval'], format: 'json' });
    expect(() => parseConfig({ notify: { url: 'ftp://x/y' } })).toThrow(/notify\.url/);
    expect(() => parseConfig({ notify: { url: 'https://x', events: ['turn_started'] } })).toThrow(/notify\.events/);
    expect(() => parseConfig({ notify: { url: 'https://x', format: 'slack' } })).toThrow(/notify\.format/);
    expect(() => parseConfig({ notify: { url: 'https://x', secret: 'inline' } })).toThrow(/notify/);
  });

  test('combined observers each see every batch; model clients are wrapped by each; absent hooks stay absent', async () => {
    const { combineObservers } = await import('../src/session/observer.js');
    const seen: string[] = [];
    const a = { committed: () => seen.push('a'), modelClient: (c: never) => ({ stream: (r: never) => (seen.push('wrapA'), (c as { stream(r: never): never }).stream(r)) }) as never };
    const b = { committed: () => seen.push('b') };
    expect(combineObservers(null, b)).toBe(b);
    const both = combineObservers(a as never, b)!;
    both.committed({} as never);
    expect(seen).toEqual(['a', 'b']);
    expect(both.commitTick).toBeUndefined();
    expect(both.traceContext).toBeUndefined();
    expect(both.modelClient).toBeDefined();
  });
});
