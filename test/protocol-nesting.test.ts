/**
 * A real daemon refuses deeply nested capability arguments for their nesting (not their
 * size, which is small) with a typed error, and stays usable: no walk over client data
 * overflows the stack.
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import { LIMITS } from '../protocol/index.js';
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

const capabilityFrame = (sessionId: string, id: string, json: string) =>
  `{"type":"submit","session_id":"${sessionId}","submission":{"id":"${id}","op":{"type":"capability_command","capability":"session","command":"status","arguments":${json}}}}`;

it.each([
  ['5 000 levels (10 KB)', 5000],
  ['1 000 000 levels (2 MB)', 1_000_000],
])('arguments nested %s are refused as too deeply nested', async (_what, depth) => {
  const session = (await c.createSession()).session_id as string;
  await c.attach(session);
  const id = `deep-${depth}`;
  const start = c.frames.length;
  c.send(capabilityFrame(session, id, `${'['.repeat(depth)}1${']'.repeat(depth)}`));
  const answer = await c.until(() => c.frames.slice(start).find((f) => f.submission_id === id));
  expect(answer).toMatchObject({
    type: 'error',
    code: 'invalid_submission',
    submission_id: id,
    message: `submission.op.arguments: must be a JSON value nested at most ${LIMITS.jsonMaxDepth} levels deep`,
  });
  // The same command at the bound is accepted and runs.
  const atBound = `${'['.repeat(LIMITS.jsonMaxDepth)}1${']'.repeat(LIMITS.jsonMaxDepth)}`;
  const queued = await c.submit(session, `${id}-ok`, { type: 'capability_command', capability: 'session', command: 'status', arguments: JSON.parse(atBound) });
  expect(queued).toMatchObject({ type: 'queued', submission_id: `${id}-ok` });
  await c.waitForEvent(session, (msg, event) => msg.type === 'capability_output' && event.submission_id === `${id}-ok`);
  expect((await c.request({ type: 'list_sessions', limit: 1 })).type).toBe('sessions');
  expect(c.invalid).toEqual([]);
});
