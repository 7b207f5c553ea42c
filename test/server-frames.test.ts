/** Protocol v1 frames: each request type, submissions, and typed errors for bad frames. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connect, type TestClient } from './helpers/client.js';
import { startDaemon, type Daemon } from './helpers/daemon.js';

let d: Daemon;
let c: TestClient;

beforeAll(async () => {
  d = await startDaemon({ config: { approval_policy: 'auto' } });
  c = await connect(d);
});
afterAll(async () => {
  await c?.close();
  await d?.stop();
});

/** The connection still answers requests. */
async function stillUsable(client: TestClient = c): Promise<void> {
  expect((await client.request({ type: 'list_sessions', limit: 1 })).type).toBe('sessions');
}

describe('create_session', () => {
  it('creates a session with the given config and defaults from the config file', async () => {
    const answer = await c.request({ type: 'create_session', req_id: 'create-1', config: { title: 'first', cwd: d.dataDir } });
    expect(answer).toMatchObject({
      type: 'session_created',
      req_id: 'create-1',
      session: {
        session_id: expect.stringMatching(/^[A-Za-z0-9._:-]{1,128}$/),
        title: 'first',
        cwd: d.dataDir,
        status: 'idle',
        approval_policy: 'auto',
        model: { route: 'scripted' },
        head_sequence: 1,
        active_turn_id: null,
        pending_approval: null,
      },
    });
    const ask = await c.createSession({ approval_policy: 'ask' });
    expect(ask.approval_policy).toBe('ask');
    expect(c.invalid).toEqual([]);
  });

  it('accepts a missing config', async () => {
    const answer = await c.request({ type: 'create_session' });
    expect(answer.type).toBe('session_created');
  });

  it.each([
    ['an unknown model route', { model_route: 'no-such-route' }, /model_route/],
    ['a missing cwd', { cwd: '/definitely/not/here' }, /cwd/],
  ])('answers %s with invalid_frame echoing req_id', async (_what, config, pattern) => {
    const answer = await c.request({ type: 'create_session', req_id: 'bad-create', config });
    expect(answer).toMatchObject({ type: 'error', code: 'invalid_frame', req_id: 'bad-create', message: expect.stringMatching(pattern) });
  });
});

describe('list_sessions', () => {
  it('pages newest first with next_before', async () => {
    const created: string[] = [];
    for (let i = 0; i < 5; i++) created.push((await c.createSession({ title: `page-${i}` })).session_id as string);
    const all = await c.request({ type: 'list_sessions', limit: 1000 });
    const ids = (all.sessions as Array<{ session_id: string }>).map((s) => s.session_id);
    expect(ids.slice(0, 5)).toEqual([...created].reverse());
    expect(all.next_before).toBeNull();

    const paged: string[] = [];
    let before: string | null = null;
    let pages = 0;
    do {
      const page = await c.request({ type: 'list_sessions', limit: 2, ...(before && { before }) });
      expect(page.sessions.length).toBeLessThanOrEqual(2);
      paged.push(...(page.sessions as Array<{ session_id: string }>).map((s) => s.session_id));
      before = page.next_before as string | null;
      pages++;
    } while (before !== null && pages < 100);
    expect(paged).toEqual(ids);
  });
});

describe('attach, detach, history', () => {
  it('answers unknown sessions with unknown_session', async () => {
    for (const type of ['attach', 'history'] as const) {
      const answer = await c.request({ type, session_id: 's_nope', ...(type === 'history' && { before_sequence: 5 }) });
      expect(answer).toMatchObject({ type: 'error', code: 'unknown_session', req_id: expect.any(String) });
    }
    c.send({ type: 'submit', session_id: 's_nope', submission: { id: 'x1', op: { type: 'message', text: 'hi' } } });
    expect(await c.waitFor((f) => f.submission_id === 'x1')).toMatchObject({
      type: 'error',
      code: 'unknown_session',
      submission_id: 'x1',
    });
  });

  it('attaches, streams a turn, detaches and stops streaming', async () => {
    const s = await c.createSession();
    const sid = s.session_id as string;
    const attached = await c.attach(sid);
    expect(attached).toMatchObject({ type: 'attached', session: { session_id: sid }, head_sequence: 1, next_before_sequence: null });
    await c.waitForSequence(sid, 1);
    expect(c.events(sid)[0]).toMatchObject({ type: 'session_configured', session_id: sid });

    const id = await c.submitMessage(sid, 'hello agent');
    const done = await c.waitTurnEnd(sid, id);
    expect(done).toMatchObject({ type: 'turn_complete', last_message: 'echo: hello agent' });
    const texts = c.events(sid).filter((m) => m.type === 'agent_message_delta').map((m) => m.delta as string);
    expect(texts.length).toBeGreaterThanOrEqual(2);
    expect(texts.join('')).toBe('echo: hello agent');

    const detached = await c.request({ type: 'detach', session_id: sid });
    expect(detached).toMatchObject({ type: 'detached', session_id: sid });
    const before = c.batches(sid).length;
    const other = await connect(d);
    await other.attach(sid, { replay_batches: 0 });
    const id2 = await other.submitMessage(sid, 'while detached');
    // The turn ends for `other` (attached) but nothing more reaches `c`.
    await other.waitTurnEnd(sid, id2);
    await stillUsable();
    expect(c.batches(sid).length).toBe(before);
    await other.close();
    expect(c.invalid).toEqual([]);
  });

  it('detach of a session that is not attached is answered detached', async () => {
    expect(await c.request({ type: 'detach', session_id: 's_whatever' })).toMatchObject({ type: 'detached', session_id: 's_whatever' });
  });

  it('pages history backwards with next_before_sequence', async () => {
    const s = await c.createSession();
    const sid = s.session_id as string;
    await c.attach(sid);
    for (let i = 0; i < 3; i++) await c.waitTurnEnd(sid, await c.submitMessage(sid, `turn ${i}`));
    const head = (await c.attach(sid, { replay_batches: 0 })).head_sequence as number;
    const live = c.batches(sid).filter((b, i, all) => all.findIndex((x) => x.sequence === b.sequence) === i);
    expect(live.map((b) => b.sequence)).toEqual(Array.from({ length: head }, (_, i) => i + 1));

    const h1 = await c.request({ type: 'history', session_id: sid, before_sequence: head + 1, limit: 2 });
    expect(h1).toMatchObject({ type: 'history', session_id: sid, next_before_sequence: head - 1 });
    expect(h1.batches.map((b: { sequence: number }) => b.sequence)).toEqual([head - 1, head]);

    const collected: unknown[] = [];
    let before: number | null = head + 1;
    while (before !== null) {
      const page = await c.request({ type: 'history', session_id: sid, before_sequence: before, limit: 3 });
      collected.unshift(...(page.batches as unknown[]));
      before = page.next_before_sequence as number | null;
    }
    expect(collected).toEqual(live);

    const empty = await c.request({ type: 'history', session_id: sid, before_sequence: 1 });
    expect(empty).toMatchObject({ type: 'history', batches: [], next_before_sequence: null });
    expect(c.invalid).toEqual([]);
  });
});

describe('submit', () => {
  it('answers queued with increasing ingress_seq, then admitted; a retried id is already_accepted', async () => {
    const s = await c.createSession();
    const sid = s.session_id as string;
    await c.attach(sid, { replay_batches: 0 });
    const q1 = await c.submit(sid, 'msg-a', { type: 'message', text: 'one' });
    expect(q1).toEqual({ type: 'queued', session_id: sid, submission_id: 'msg-a', ingress_seq: 1 });
    expect(await c.waitFor((f) => f.type === 'admitted' && f.submission_id === 'msg-a')).toEqual({
      type: 'admitted',
      session_id: sid,
      submission_id: 'msg-a',
      outcome: 'accepted',
    });
    await c.waitTurnEnd(sid, 'msg-a');
    const q2 = await c.submit(sid, 'status-1', { type: 'capability_command', capability: 'session', command: 'status' });
    expect(q2).toMatchObject({ type: 'queued', ingress_seq: 2 });
    const out = await c.waitForEvent(sid, (m, e) => m.type === 'capability_output' && e.submission_id === 'status-1');
    expect(out.output).toMatchObject({ status: 'idle' });

    const start = c.frames.length;
    const q3 = await c.submit(sid, 'msg-a', { type: 'message', text: 'one' });
    expect(q3).toMatchObject({ type: 'queued', ingress_seq: 3 });
    const again = await c.waitFor((f) => f.type === 'admitted' && f.submission_id === 'msg-a' && c.frames.indexOf(f) >= start);
    expect(again.outcome).toBe('already_accepted');
    // A queued frame always comes before its admitted frame.
    const order = c.frames.filter((f) => f.submission_id === 'msg-a').map((f) => f.type);
    expect(order).toEqual(['queued', 'admitted', 'queued', 'admitted']);
  });

  it('rejects invalid submissions with invalid_submission and the submission id', async () => {
    const s = await c.createSession();
    const sid = s.session_id as string;
    const bad: Array<[string, unknown]> = [
      ['unknown op', { type: 'dance' }],
      ['empty text', { type: 'message', text: '' }],
      ['text over 1 MiB', { type: 'message', text: 'x'.repeat(1024 * 1024 + 1) }],
      ['bad mode', { type: 'message', text: 'hi', mode: 'later' }],
      ['unknown op field', { type: 'interrupt', turn_id: 't1', force: true }],
      ['bad turn id', { type: 'interrupt', turn_id: 'has spaces' }],
      ['oversize capability input', { type: 'capability_command', capability: 'c', command: 'x', input: 'y'.repeat(65 * 1024) }],
    ];
    for (const [what, op] of bad) {
      const id = `bad-${what.replace(/\W+/g, '-')}`;
      const answer = await c.submit(sid, id, op as Record<string, unknown>);
      expect(answer, what).toMatchObject({ type: 'error', code: 'invalid_submission', submission_id: id });
    }
    await stillUsable();
  });
});

describe('bad frames get typed errors and the connection stays usable', () => {
  const cases: Array<[string, string, string, Record<string, unknown>?]> = [
    ['not JSON', '{"type": "list_sessions"', 'invalid_frame'],
    ['a JSON array', '[1,2,3]', 'invalid_frame'],
    ['a JSON string', '"hello"', 'invalid_frame'],
    ['no type', '{"req_id":"r"}', 'invalid_frame', { req_id: 'r' }],
    ['an unknown type', '{"type":"explode","req_id":"u1"}', 'invalid_frame', { req_id: 'u1' }],
    ['an unknown field', '{"type":"list_sessions","req_id":"u2","colour":"red"}', 'invalid_frame', { req_id: 'u2' }],
    ['a bad session id', '{"type":"attach","req_id":"u3","session_id":"no spaces allowed"}', 'invalid_frame', { req_id: 'u3' }],
    ['a session id over 128 bytes', JSON.stringify({ type: 'attach', req_id: 'u4', session_id: 'a'.repeat(129) }), 'invalid_frame'],
    ['an oversize title', JSON.stringify({ type: 'create_session', req_id: 'u5', config: { title: 't'.repeat(300) } }), 'invalid_frame'],
    ['a negative limit', '{"type":"list_sessions","req_id":"u6","limit":-1}', 'invalid_frame'],
    ['a fractional sequence', '{"type":"history","req_id":"u7","session_id":"s","before_sequence":1.5}', 'invalid_frame'],
    ['a bad submit envelope', '{"type":"submit","session_id":"s","submission":{"id":"ok1","op":{"type":"message","text":"x"}},"x":1}', 'invalid_frame'],
    ['a bad submission id', '{"type":"submit","session_id":"s","submission":{"id":"bad id","op":{"type":"message","text":"x"}}}', 'invalid_submission'],
  ];
  it.each(cases)('%s', async (_what, text, code, echo) => {
    const start = c.frames.length;
    c.send(text);
    const err = await c.until(() => c.frames.slice(start).find((f) => f.type === 'error'));
    expect(err).toMatchObject({ type: 'error', code, message: expect.any(String), ...echo });
    await stillUsable();
  });

  it('invalid UTF-8 in a text frame gets a typed error, then close 1007; the daemon goes on', async () => {
    const other = await connect(d);
    // 0xC3 0x28 is not UTF-8; the ws client sends the bytes as they are in a text frame.
    other.ws.send(Buffer.from([0x7b, 0x22, 0xc3, 0x28, 0x22, 0x7d]), { binary: false });
    const err = await other.next();
    expect(err).toMatchObject({ type: 'error', code: 'invalid_frame', message: expect.stringMatching(/UTF-8/) });
    expect((await other.closed).code).toBe(1007);
    await stillUsable();
  });

  it('invalid UTF-8 in the hello gets a protocol error, then close 1007', async () => {
    const other = await connect(d, { hello: false });
    other.ws.send(Buffer.from([0x7b, 0xff, 0x7d]), { binary: false });
    expect(await other.next()).toMatchObject({ type: 'error', code: 'protocol', message: expect.stringMatching(/UTF-8/) });
    expect((await other.closed).code).toBe(1007);
  });

  it('a binary frame', async () => {
    const start = c.frames.length;
    c.ws.send(Buffer.from('{"type":"list_sessions","req_id":"bin"}'));
    const err = await c.until(() => c.frames.slice(start).find((f) => f.type === 'error'));
    expect(err).toMatchObject({ code: 'invalid_frame', message: expect.stringMatching(/binary/) });
    await stillUsable();
  });

  it('an attach after the head is refused', async () => {
    const s = await c.createSession();
    const answer = await c.request({ type: 'attach', session_id: s.session_id, after_sequence: 99 });
    expect(answer).toMatchObject({ type: 'error', code: 'invalid_frame', message: expect.stringMatching(/head_sequence 1/) });
  });

  it('a frame over 4 MiB is refused by the socket (1009); the daemon goes on', async () => {
    const big = await connect(d);
    big.send(JSON.stringify({ type: 'list_sessions', req_id: 'x'.repeat(4 * 1024 * 1024) }));
    expect((await big.closed).code).toBe(1009);
    await stillUsable();
    expect((await d.healthz()).ok).toBe(true);
  });

  it('a frame just under 4 MiB is parsed (and rejected for its content)', async () => {
    const s = await c.createSession();
    const text = JSON.stringify({
      type: 'submit',
      session_id: s.session_id,
      submission: { id: 'big-1', op: { type: 'message', text: 'y'.repeat(4 * 1024 * 1024 - 200) } },
    });
    expect(Buffer.byteLength(text)).toBeLessThan(4 * 1024 * 1024);
    const start = c.frames.length;
    c.send(text);
    const err = await c.until(() => c.frames.slice(start).find((f) => f.type === 'error'));
    expect(err).toMatchObject({ code: 'invalid_submission', submission_id: 'big-1', message: expect.stringMatching(/text/) });
    await stillUsable();
  });
});
