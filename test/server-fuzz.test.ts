/**
 * Fuzzed client frames (fast-check) against the real daemon: every frame gets an answer
 * (a typed error for bad ones, with the code the protocol parser predicts), the daemon
 * never crashes, never answers `internal`, and the connection stays usable.
 */
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseClientFrame } from '../protocol/index.js';
import { connect, type Frame, type TestClient } from './helpers/client.js';
import { startDaemon, type Daemon } from './helpers/daemon.js';

let d: Daemon;
let c: TestClient;
let realSession: string;
let sentinel = 0;

beforeAll(async () => {
  d = await startDaemon({ config: { approval_policy: 'auto', limits: { inbox_capacity: 8 } } });
  c = await connect(d);
  realSession = (await c.createSession()).session_id as string;
});
afterAll(async () => {
  await c?.close();
  await d?.stop();
});

/** Frames that may arrive at any time, unrelated to the frame just sent. */
const ASYNC = new Set(['batch', 'admitted']);

/** Send one raw frame; return the answers that came before the sentinel's answer. */
async function roundTrip(text: string): Promise<Frame[]> {
  const start = c.frames.length;
  c.send(text);
  const id = `sentinel-${++sentinel}`;
  c.send({ type: 'list_sessions', req_id: id, limit: 1 });
  const end = await c.until(() => {
    const i = c.frames.findIndex((f, k) => k >= start && f.req_id === id && f.type === 'sessions');
    return i >= 0 ? i : undefined;
  }, 10_000, `sentinel ${id}`);
  return c.frames.slice(start, end).filter((f) => !ASYNC.has(f.type));
}

/** Verdicts of the parser over the fuzzed frames, by frame type or error code. */
const verdicts: Record<string, number> = {};

/** Check the daemon's answer to one fuzzed frame against the parser's verdict. */
async function check(text: string): Promise<void> {
  // What actually goes over the wire (lone surrogates become U+FFFD).
  const wire = Buffer.from(text, 'utf8').toString('utf8');
  const verdict = parseClientFrame(wire);
  const key = verdict.ok ? `ok:${verdict.frame.type}` : verdict.error.code;
  verdicts[key] = (verdicts[key] ?? 0) + 1;
  const answers = await roundTrip(text);
  if (!verdict.ok) {
    expect(answers).toHaveLength(1);
    expect(answers[0]).toMatchObject({ type: 'error', code: verdict.error.code });
    if (verdict.error.req_id !== undefined) expect(answers[0]!.req_id).toBe(verdict.error.req_id);
    if (verdict.error.submission_id !== undefined) expect(answers[0]!.submission_id).toBe(verdict.error.submission_id);
  } else {
    expect(answers.length).toBeGreaterThanOrEqual(1);
    for (const a of answers) if (a.type === 'error') expect(a.code).not.toBe('internal');
  }
}

const REAL = 'REAL-SESSION';
const anyValue = fc.oneof(fc.jsonValue({ maxDepth: 2 }), fc.string({ unit: 'binary', maxLength: 50 }));
/** Mostly `good`, sometimes anything. */
const sometimes = <T>(good: fc.Arbitrary<T>): fc.Arbitrary<unknown> =>
  fc.oneof({ weight: 5, arbitrary: good }, { weight: 1, arbitrary: anyValue });
const validId = fc.stringMatching(/^[A-Za-z0-9._:-]{1,24}$/);
const sessionRef = sometimes(fc.oneof(fc.constant(REAL), validId, fc.constant('x'.repeat(129))));
const reqId = sometimes(fc.string({ minLength: 1, maxLength: 20 }));
const name = sometimes(fc.string({ minLength: 1, maxLength: 20 }));
const op = fc.oneof(
  fc.record({ type: fc.constant('message'), text: sometimes(fc.string({ minLength: 1, maxLength: 30 })), mode: sometimes(fc.constantFrom('queue', 'steer')) }, { requiredKeys: ['type', 'text'] }),
  fc.record({ type: fc.constant('interrupt'), turn_id: sometimes(validId) }),
  fc.record({ type: fc.constant('exec_approval'), id: sometimes(validId), decision: sometimes(fc.constantFrom('approve', 'approve_for_session', 'deny', 'abort')) }),
  fc.record({ type: fc.constant('set_model'), route: sometimes(fc.constantFrom('scripted', 'nope')), reasoning_effort: name }, { requiredKeys: ['type', 'route'] }),
  fc.record({ type: fc.constant('capability_command'), capability: sometimes(fc.constantFrom('session', 'other')), command: sometimes(fc.constantFrom('status', 'title', 'x')), arguments: anyValue, input: anyValue }, { requiredKeys: ['type', 'capability', 'command'] }),
  fc.record({ type: fc.constant('resume_session'), session_id: sessionRef }),
  fc.record({ type: sometimes(fc.constantFrom('dance', 'message')) }),
);
const byType = {
  hello: fc.record({ type: fc.constant('hello'), protocol: sometimes(fc.constant(1)), client: name, token: fc.string({ maxLength: 10 }) }, { requiredKeys: ['type', 'protocol'] }),
  create_session: fc.record(
    {
      type: fc.constant('create_session'),
      req_id: reqId,
      config: sometimes(fc.record({ title: sometimes(fc.string({ maxLength: 40 })), approval_policy: sometimes(fc.constantFrom('ask', 'auto')), model_route: sometimes(fc.constantFrom('scripted', 'nope')), cwd: sometimes(fc.constantFrom('/tmp', '/nope')) }, { requiredKeys: [] })),
    },
    { requiredKeys: ['type', 'req_id'] },
  ),
  list_sessions: fc.record({ type: fc.constant('list_sessions'), req_id: reqId, limit: sometimes(fc.integer({ min: 1, max: 1000 })), before: sessionRef }, { requiredKeys: ['type', 'req_id'] }),
  attach: fc.record({ type: fc.constant('attach'), req_id: reqId, session_id: sessionRef, replay_batches: sometimes(fc.integer({ min: 0, max: 200 })), after_sequence: sometimes(fc.integer({ min: 0, max: 4 })) }, { requiredKeys: ['type', 'req_id', 'session_id'] }),
  detach: fc.record({ type: fc.constant('detach'), req_id: reqId, session_id: sessionRef }),
  history: fc.record({ type: fc.constant('history'), req_id: reqId, session_id: sessionRef, before_sequence: sometimes(fc.integer({ min: 1, max: 50 })), limit: sometimes(fc.integer({ min: 1, max: 1000 })) }, { requiredKeys: ['type', 'req_id', 'session_id', 'before_sequence'] }),
  submit: fc.record({ type: fc.constant('submit'), session_id: sessionRef, submission: sometimes(fc.record({ id: sometimes(validId), op })) }),
  other: fc.record({ type: sometimes(fc.constantFrom('welcome', 'batch', '', 'HELLO')), req_id: reqId }),
};
/** Frames shaped like protocol frames: mostly valid fields, sometimes one bad or unknown field. */
const structured = fc
  .tuple(fc.oneof(...Object.values(byType)), fc.oneof(
      { weight: 8, arbitrary: fc.constant(null) },
      { weight: 1, arbitrary: fc.tuple(fc.string({ minLength: 1, maxLength: 8 }), anyValue) },
    ))
  .map(([frame, extra]) => {
    const f = { ...(frame as Record<string, unknown>) };
    if (extra) f[extra[0]] = extra[1];
    return JSON.stringify(f).replaceAll(JSON.stringify(REAL), JSON.stringify(realSession));
  });

describe('fuzzed frames', () => {
  it('arbitrary text', async () => {
    await fc.assert(fc.asyncProperty(fc.string({ unit: 'binary', maxLength: 200 }), check), { numRuns: 150 });
  });

  it('arbitrary JSON', async () => {
    await fc.assert(fc.asyncProperty(fc.json({ maxDepth: 4 }), check), { numRuns: 150 });
  });

  it('frames shaped like protocol frames', async () => {
    for (const k of Object.keys(verdicts)) delete verdicts[k];
    await fc.assert(fc.asyncProperty(structured, check), { numRuns: 400 });
    // The mix covers valid frames of every type and both kinds of rejection.
    for (const type of ['create_session', 'list_sessions', 'attach', 'detach', 'history', 'submit']) {
      expect(verdicts[`ok:${type}`] ?? 0, type).toBeGreaterThan(0);
    }
    expect(verdicts.invalid_frame ?? 0).toBeGreaterThan(20);
    expect(verdicts.invalid_submission ?? 0).toBeGreaterThan(1);
  });

  it('binary frames', async () => {
    await fc.assert(
      fc.asyncProperty(fc.uint8Array({ maxLength: 100 }), async (bytes) => {
        const start = c.frames.length;
        c.ws.send(bytes);
        const err = await c.until(() => c.frames.slice(start).find((f) => f.type === 'error'));
        expect(err.code).toBe('invalid_frame');
      }),
      { numRuns: 30 },
    );
  });

  it('left the daemon healthy and the connection usable', async () => {
    const health = await d.healthz();
    expect(health.ok).toBe(true);
    expect((await c.request({ type: 'list_sessions', limit: 1 })).type).toBe('sessions');
    expect(c.invalid).toEqual([]);
    expect(c.frames.filter((f) => f.type === 'error' && f.code === 'internal')).toEqual([]);
    expect(d.stderr()).not.toMatch(/"level":(50|60)/); // no error or fatal logs
  });
});
