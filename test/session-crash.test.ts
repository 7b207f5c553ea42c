/**
 * An actor that throws is a stopped session, not a zombie (issue 11.3), and model-supplied
 * tool arguments are bounded (1 MiB, 64 levels): refused with an error result, never
 * approved or run, never walked recursively. Real SessionHost, real SQLite file, a real
 * ModelClient implementation plugged into the model seam.
 */
import { expect, test } from 'vitest';
import type { ModelChunk, ModelClient, ModelRequest } from '../src/model/types.js';
import { msg, op, openTestHost, terminalCount, Watcher, type Harness } from './helpers/session.js';

let h: Harness | undefined;

/** A model that asks for one tool call with `args` first, then answers with text. */
function toolThenText(args: () => Record<string, unknown>): ModelClient & { calls: ModelRequest[] } {
  const calls: ModelRequest[] = [];
  return {
    calls,
    async *stream(request: ModelRequest): AsyncGenerator<ModelChunk> {
      calls.push(request);
      const last = request.context[request.context.length - 1];
      if (last?.role === 'user' && last.text.startsWith('call')) {
        yield { type: 'tool_call', call: { call_id: `call_${calls.length}`, tool: 'shell', arguments: args() } };
        yield { type: 'finish', reason: 'tool_calls' };
        return;
      }
      yield { type: 'text_delta', delta: `answered after ${last?.role}` };
      yield { type: 'finish', reason: 'stop' };
    },
  };
}

function deep(levels: number): Record<string, unknown> {
  let v: Record<string, unknown> = { leaf: true };
  for (let i = 0; i < levels; i++) v = { a: v };
  return v;
}

test('tool arguments nested 5000 levels deep: an error result to the model, no approval request, the turn goes on', async () => {
  const model = toolThenText(() => ({ command: 'echo hi', nested: deep(5000) }));
  h = await openTestHost({ approval_policy: 'ask' }, { modelClient: () => model });
  const id = (await h.host.create({ cwd: h.dir })).session_id;
  const s = (await h.host.open(id))!;
  const w = new Watcher(s);
  s.submit(msg('call deep'));
  const done = await w.next('turn_complete');
  expect(done.tool_calls).toBe(1);
  expect(done.failed_tool_calls).toBe(1);
  expect(w.count('exec_approval_request')).toBe(0);
  const end = w.msgs('tool_call_end')[0] as { status: string; output: string };
  expect(end.status).toBe('error');
  expect(end.output).toMatch(/nested more than 64 levels/);
  // The model saw the error result, and the session is still healthy.
  expect(model.calls).toHaveLength(2);
  expect(model.calls[1]!.context.at(-1)).toMatchObject({ role: 'tool', output: end.output });
  s.submit(msg('hello'));
  await w.next('turn_complete', 2);
});

test('tool arguments over 1 MiB are refused the same way', async () => {
  const model = toolThenText(() => ({ command: 'x'.repeat(1024 * 1024 + 10) }));
  h = await openTestHost({ approval_policy: 'auto' }, { modelClient: () => model });
  const s = (await h.host.open((await h.host.create({ cwd: h.dir })).session_id))!;
  const w = new Watcher(s);
  s.submit(msg('call big'));
  await w.next('turn_complete');
  expect(w.msgs('tool_call_end')[0]).toMatchObject({ status: 'error', output: expect.stringMatching(/more than the 1048576 allowed/) });
  expect(w.batches.every((b) => Buffer.byteLength(b.frame) <= 4 * 1024 * 1024)).toBe(true);
});

test('an exception inside the actor fails the open turn "internal", stops the session, and re-attaching continues without crashing again', async () => {
  let crash = true;
  const model = toolThenText(() =>
    crash
      ? {
          command: 'echo never',
          // Serializing these arguments throws inside the actor's step-end transition.
          bad: { toJSON: () => { throw new Error('boom in the chart'); } },
        }
      : { command: 'echo fine' },
  );
  h = await openTestHost({ approval_policy: 'auto' }, { modelClient: () => model });
  const id = (await h.host.create({ cwd: h.dir })).session_id;
  const s = (await h.host.open(id))!;
  const w = new Watcher(s);
  const stopped: string[] = [];
  s.onStopped((reason) => stopped.push(reason));
  s.submit(msg('call crash', undefined, 'crash-1'));
  await w.until(() => stopped.length > 0, 5000, 'the session stops');
  expect(stopped[0]).toMatch(/internal error.*boom in the chart/);
  // Never `queued` into a dead actor.
  expect(s.submit(op({ type: 'interrupt', turn_id: 'turn_x' }))).toMatchObject({ ok: false, code: 'stopped' });
  expect(s.submit(msg('lost?'))).toMatchObject({ ok: false, code: 'stopped' });
  // The host fails the open turn from the last checkpoint, at once.
  const deadline = Date.now() + 5000;
  let events = (await h.host.readAfter(id, 0, 1000)).flatMap((b) => b.events);
  while (!events.some((e) => e.msg.type === 'turn_failed') && Date.now() < deadline) {
    await new Promise((r) => setTimeout(r, 20));
    events = (await h.host.readAfter(id, 0, 1000)).flatMap((b) => b.events);
  }
  const failed = events.find((e) => e.msg.type === 'turn_failed')!;
  expect(failed.msg).toMatchObject({ error: { code: 'internal', message: expect.stringMatching(/boom in the chart/) } });
  expect(failed.submission_id).toBe('crash-1');
  expect(terminalCount(events)).toBe(1);
  // Re-attaching: a healthy session, also after a restart.
  crash = false;
  const again = (await h.host.open(id))!;
  expect(again).not.toBe(s);
  expect(again.descriptor()).toMatchObject({ status: 'idle', active_turn_id: null });
  const aw = new Watcher(again);
  again.submit(msg('call ok'));
  expect((await aw.next('turn_complete')).tool_calls).toBe(1);
  await h.close();
  const host = await h.reopen();
  const third = (await host.open(id))!;
  expect(third.descriptor().status).toBe('idle');
  const all = (await host.readAfter(id, 0, 1000)).flatMap((b) => b.events);
  expect(terminalCount(all)).toBe(all.filter((e) => e.msg.type === 'turn_started').length);
});
