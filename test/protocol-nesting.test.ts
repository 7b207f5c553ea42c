/**
 * A real daemon refuses deeply nested capability arguments for their nesting (not their
 * size, which is small) with a typed error, and stays usable: no walk over client data
 * overflows the stack.
 */
import { expect, it } from 'vitest';
import { LIMITS } from '../protocol/index.js';
import { connect } from './helpers/client.js';
import { startDaemon } from './helpers/daemon.js';

const capabilityFrame = (sessionId: string, id: string, json: string) =>
  `{"type":"submit","session_id":"${sessionId}","submission":{"id":"${id}","op":{"type":"capability_command","capability":"session","command":"status","arguments":${json}}}}`;
const nested = (depth: number) => `${'['.repeat(depth)}1${']'.repeat(depth)}`;

it('arguments nested 5 000 levels (10 KB) or 1 000 000 levels (2 MB) are refused as too deeply nested', async () => {
  const daemon = await startDaemon({ config: { approval_policy: 'auto' } });
  const c = await connect(daemon);
  try {
    const session = (await c.createSession()).session_id as string;
    await c.attach(session);
    for (const depth of [5000, 1_000_000]) {
      const id = `deep-${depth}`;
      const start = c.frames.length;
      c.send(capabilityFrame(session, id, nested(depth)));
      const answer = await c.until(() => c.frames.slice(start).find((f) => f.submission_id === id));
      expect(answer).toMatchObject({
        type: 'error',
        code: 'invalid_submission',
        submission_id: id,
        message: `submission.op.arguments: must be a JSON value nested at most ${LIMITS.jsonMaxDepth} levels deep`,
      });
    }
    // The same command at the bound is accepted and runs; the connection stays usable.
    const queued = await c.submit(session, 'at-bound', { type: 'capability_command', capability: 'session', command: 'status', arguments: JSON.parse(nested(LIMITS.jsonMaxDepth)) });
    expect(queued).toMatchObject({ type: 'queued', submission_id: 'at-bound' });
    await c.waitForEvent(session, (msg, event) => msg.type === 'capability_output' && event.submission_id === 'at-bound');
    expect((await c.request({ type: 'list_sessions', limit: 1 })).type).toBe('sessions');
    expect(c.invalid).toEqual([]);
  } finally {
    await c.close();
    await daemon.stop();
  }
});
