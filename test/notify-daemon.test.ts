/**
 * The notification webhook through a real daemon (docs/sessions.md#notifications): an
 * approval and the turn's end reach a local HTTP receiver as signed JSON; the `ntfy`
 * format; a receiver that never answers delays no turn.
 */
import { createHmac } from 'node:crypto';
import { afterEach, describe, expect, test } from 'vitest';
import { daemonPool } from './helpers/pool.js';
import { startReceiver, type Receiver } from './helpers/receiver.js';

const pool = daemonPool();
let receivers: Receiver[] = [];
afterEach(async () => {
  for (const r of receivers) await r.close();
  receivers = [];
});

async function receiver(fallback: 200 | 'hang' = 200): Promise<Receiver> {
  const r = await startReceiver(fallback);
  receivers.push(r);
  return r;
}

const SECRET = 'notify-test-secret';

describe('the notify webhook', () => {
  test('an approval and the turn end POST signed JSON with the session, title, tool, summary and web link', async () => {
    const r = await receiver();
    const { d, c, dir } = await pool.boot(
      { approval_policy: 'ask', notify: { url: r.url, events: ['approval', 'turn_complete', 'turn_failed'], secret_env: 'AGENTD_NOTIFY_SECRET' } },
      undefined,
      { AGENTD_NOTIFY_SECRET: SECRET },
    );
    const s = (await c.createSession({ cwd: dir, approval_policy: 'ask' })).session_id as string;
    await c.attach(s);
    const id = await c.submitMessage(s, '!sh echo hi-from-the-agent');
    const ask = await c.waitForEvent(s, (m) => m.type === 'exec_approval_request');
    const [first] = await r.waitFor(1);
    expect(first!.method).toBe('POST');
    expect(first!.headers['content-type']).toBe('application/json');
    expect(first!.headers['x-agentd-signature']).toBe(`sha256=${createHmac('sha256', SECRET).update(first!.body).digest('hex')}`);
    const body = JSON.parse(first!.body);
    expect(body).toMatchObject({
      event: 'approval',
      session_id: s,
      title: '!sh echo hi-from-the-agent',
      tool: 'shell',
      approval_id: ask.approval_id,
      summary: 'echo hi-from-the-agent',
      url: `${d.httpUrl}/#session=${s}`,
    });
    expect(body.url).not.toContain('token');
    await c.submit(s, 'ap1', { type: 'exec_approval', id: ask.approval_id, decision: 'approve' });
    expect((await c.waitTurnEnd(s, id)).type).toBe('turn_complete');
    const [, second] = await r.waitFor(2);
    expect(JSON.parse(second!.body)).toMatchObject({ event: 'turn_complete', session_id: s, summary: 'command exited with code 0' });
    // A signature that does not match a changed body: the check can fail.
    expect(second!.headers['x-agentd-signature']).not.toBe(first!.headers['x-agentd-signature']);
  });

  test('format ntfy sends a plain-text body with Title, Priority and Tags headers', async () => {
    const r = await receiver();
    const { c, dir } = await pool.boot({ approval_policy: 'ask', notify: { url: r.url, format: 'ntfy' } });
    const s = (await c.createSession({ cwd: dir, approval_policy: 'ask', title: 'deploy box' })).session_id as string;
    await c.attach(s);
    await c.submitMessage(s, '!sh rm -rf build');
    await c.waitForEvent(s, (m) => m.type === 'exec_approval_request');
    const [req] = await r.waitFor(1);
    expect(req!.headers['content-type']).toMatch(/^text\/plain/);
    expect(req!.headers.title).toBe('Approval needed: deploy box');
    expect(req!.headers.priority).toBe('high');
    expect(req!.headers.tags).toBe('warning');
    expect(req!.headers['x-agentd-signature']).toBeUndefined();
    expect(req!.body).toBe(`shell: rm -rf build\ndeploy box (${s})`);
  });

  test('a receiver that never answers delays no turn', async () => {
    const r = await receiver('hang');
    const { c, dir } = await pool.boot({ approval_policy: 'auto', notify: { url: r.url, events: ['turn_complete'] } });
    const s = (await c.createSession({ cwd: dir })).session_id as string;
    await c.attach(s);
    const turns = 10;
    for (let i = 0; i < turns; i++) {
      const id = await c.submitMessage(s, `turn ${i}`);
      // Each turn ends while the receiver still holds the first POST.
      expect((await c.waitTurnEnd(s, id, 10_000)).type).toBe('turn_complete');
    }
    await r.waitFor(1);
    // One POST at a time, in order: the first still hangs, the rest wait in the bounded queue.
    expect(r.requests).toHaveLength(1);
    expect(JSON.parse(r.requests[0]!.body)).toMatchObject({ event: 'turn_complete', session_id: s });
    r.fallback = 200;
    r.release();
    // Every turn's notification arrives once the receiver answers (a timed-out POST may come twice).
    const turnIds = () => new Set(r.requests.map((q) => JSON.parse(q.body).turn_id as string));
    for (let n = turns; turnIds().size < turns; n = r.requests.length + 1) await r.waitFor(n);
    expect(turnIds().size).toBe(turns);
  });
});
