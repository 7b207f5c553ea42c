/** Turns end to end: approvals, interrupts of real tool processes, inbox limits and the cutoff rule. */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, test } from 'vitest';
import type { ContextItem, ModelClient } from '../src/model/types.js';
import { LENGTH_CONTINUATION_NOTE } from '../src/session/model_request.js';
import { scriptedModel } from '../src/model/scripted.js';
import { cleanup, msg, op, openHost, terminalCount, Watcher, type Harness } from './helpers/session.js';

let h: Harness | undefined;
afterEach(async () => {
  if (h) {
    await h.close();
    cleanup(h.dir);
    h = undefined;
  }
});

async function start(config: object = {}, model?: ModelClient | ((route: never) => ModelClient)) {
  const modelClient = typeof model === 'function' ? model : model ? () => model : undefined;
  h = await openHost(config, modelClient ? { modelClient } : {});
  const d = await h.host.create({ cwd: h.dir });
  const s = (await h.host.open(d.session_id))!;
  return { s, w: new Watcher(s), id: d.session_id };
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

async function waitFor(pred: () => boolean, timeoutMs = 5000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!pred()) {
    if (Date.now() > deadline) throw new Error('timed out');
    await new Promise((r) => setTimeout(r, 20));
  }
}

describe('approvals (policy ask)', () => {
  test('approve runs the command once', async () => {
    const { s, w } = await start({ approval_policy: 'ask' });
    s.submit(msg('!sh echo ran >> log.txt'));
    const req = await w.next('exec_approval_request');
    expect(req).toMatchObject({ tool: 'shell', arguments: { command: 'echo ran >> log.txt' }, cwd: h!.dir });
    expect(existsSync(join(h!.dir, 'log.txt'))).toBe(false);
    s.submit(op({ type: 'exec_approval', id: req.approval_id, decision: 'approve' }));
    const done = await w.next('turn_complete');
    expect(done).toMatchObject({ last_message: 'command exited with code 0', tool_calls: 1, failed_tool_calls: 0 });
    expect(readFileSync(join(h!.dir, 'log.txt'), 'utf8')).toBe('ran\n');
    const order = w.msgs().map((m) => m.type).filter((t) => /tool|approval/.test(t));
    expect(order).toEqual(['tool_call_begin', 'exec_approval_request', 'approval_resolved', 'tool_call_end']);
  });

  test('approve_for_session stops asking for the identical call only', async () => {
    const { s, w } = await start({ approval_policy: 'ask' });
    s.submit(msg('!sh echo same'));
    const req = await w.next('exec_approval_request');
    s.submit(op({ type: 'exec_approval', id: req.approval_id, decision: 'approve_for_session' }));
    await w.next('turn_complete');
    s.submit(msg('!sh echo same'));
    await w.next('turn_complete', 2);
    expect(w.count('exec_approval_request')).toBe(1);
    s.submit(msg('!sh echo different'));
    await w.next('exec_approval_request', 2);
    expect(s.descriptor().status).toBe('awaiting_approval');
  });

  test('deny gives the call a denied result and the turn goes on', async () => {
    const { s, w } = await start({ approval_policy: 'ask' });
    s.submit(msg('!sh touch nope'));
    const req = await w.next('exec_approval_request');
    s.submit(op({ type: 'exec_approval', id: req.approval_id, decision: 'deny' }));
    const done = await w.next('turn_complete');
    expect(w.msgs('tool_call_end')[0]).toMatchObject({ status: 'denied' });
    expect(done.last_message).toMatch(/^command did not complete: the user denied/);
    expect(existsSync(join(h!.dir, 'nope'))).toBe(false);
  });

  test('abort interrupts the turn', async () => {
    const { s, w } = await start({ approval_policy: 'ask' });
    s.submit(msg('!sh touch nope'));
    const req = await w.next('exec_approval_request');
    s.submit(op({ type: 'exec_approval', id: req.approval_id, decision: 'abort' }));
    expect((await w.next('turn_interrupted')).reason).toBe('interrupted');
    expect(w.msgs('approval_resolved')).toEqual([{ type: 'approval_resolved', approval_id: req.approval_id, decision: 'abort' }]);
    expect(w.msgs('tool_call_end')[0]).toMatchObject({ status: 'interrupted' });
    expect(terminalCount(w.events)).toBe(1);
    expect(s.descriptor()).toMatchObject({ status: 'idle', pending_approval: null });
  });

  test('interrupt while awaiting approval cancels the request', async () => {
    const { s, w } = await start({ approval_policy: 'ask' });
    s.submit(msg('!sh touch nope'));
    const req = await w.next('exec_approval_request');
    const turnId = s.descriptor().active_turn_id!;
    s.submit(op({ type: 'interrupt', turn_id: turnId }));
    await w.next('turn_interrupted');
    expect(w.msgs('approval_resolved')).toEqual([{ type: 'approval_resolved', approval_id: req.approval_id, decision: 'abort' }]);
    s.submit(op({ type: 'exec_approval', id: req.approval_id, decision: 'approve' }));
    await w.next('warning');
    expect(existsSync(join(h!.dir, 'nope'))).toBe(false);
  });
});

describe('interrupts', () => {
  test('mid-tool: the whole process group dies and turn_interrupted commits within 500 ms', async () => {
    const { s, w } = await start({ approval_policy: 'auto' });
    s.submit(msg('!sh echo $$ > sh.pid; sleep 30 & echo $! > child.pid; trap "" TERM; wait'));
    await w.next('tool_call_begin');
    await waitFor(() => existsSync(join(h!.dir, 'child.pid')) && readFileSync(join(h!.dir, 'child.pid'), 'utf8').endsWith('\n'));
    const shPid = Number(readFileSync(join(h!.dir, 'sh.pid'), 'utf8'));
    const childPid = Number(readFileSync(join(h!.dir, 'child.pid'), 'utf8'));
    expect(alive(shPid) && alive(childPid)).toBe(true);
    const t0 = Date.now();
    s.submit(op({ type: 'interrupt', turn_id: s.descriptor().active_turn_id! }));
    await w.next('turn_interrupted');
    expect(Date.now() - t0).toBeLessThan(500);
    expect(w.msgs('tool_call_end')[0]).toMatchObject({ status: 'interrupted' });
    // The child dies on TERM; the shell ignores TERM and is KILLed after the 2 s grace.
    await waitFor(() => !alive(childPid), 3000);
    await waitFor(() => !alive(shPid), 5000);
  });

  test('mid-stream: the model stream is aborted', async () => {
    let aborted = false;
    const { s, w } = await start({ approval_policy: 'auto' }, () => ({
      async *stream(req) {
        req.signal.addEventListener('abort', () => (aborted = true));
        yield* scriptedModel.stream(req);
      },
    }));
    s.submit(msg('!sleep 3000'));
    await w.next('agent_message_delta');
    s.submit(op({ type: 'interrupt', turn_id: s.descriptor().active_turn_id! }));
    await w.next('turn_interrupted');
    expect(aborted).toBe(true);
    // No more deltas after the terminal event.
    const n = w.count('agent_message_delta');
    await new Promise((r) => setTimeout(r, 700));
    expect(w.count('agent_message_delta')).toBe(n);
  });
});

describe('inbox', () => {
  test('a full inbox answers busy for exactly the overflow; capacity frees as submissions are handled', async () => {
    const { s, w } = await start({ approval_policy: 'auto', limits: { inbox_capacity: 4 } });
    s.submit(msg('!sleep 300'));
    await w.next('turn_started');
    const results = Array.from({ length: 10 }, (_, i) => s.submit(msg(`q${i}`)));
    expect(results.filter((r) => r.ok)).toHaveLength(4);
    expect(results.slice(4).every((r) => !r.ok && r.code === 'busy')).toBe(true);
    await w.next('turn_complete', 5);
    expect((w.msgs('turn_complete') as Array<{ last_message: string }>).map((m) => m.last_message)).toEqual([
      'slept',
      'echo: q0',
      'echo: q1',
      'echo: q2',
      'echo: q3',
    ]);
    // Capacity is free again.
    expect(s.submit(msg('later')).ok).toBe(true);
  });

  test('ingress sequence numbers count up and continue after rehydration', async () => {
    const { s, w, id } = await start({ approval_policy: 'auto' });
    expect(s.submit(op({ type: 'capability_command', capability: 'session', command: 'status' }))).toEqual({ ok: true, ingress_seq: 1 });
    expect(s.submit(msg('x'))).toEqual({ ok: true, ingress_seq: 2 });
    await w.next('turn_complete');
    await h!.close();
    const host = await h!.reopen();
    expect((await host.open(id))!.submit(msg('y'))).toEqual({ ok: true, ingress_seq: 3 });
  });

  test('a stopped session answers stopped', async () => {
    const { s } = await start();
    s.stop();
    expect(s.submit(msg('x'))).toMatchObject({ ok: false, code: 'stopped' });
  });
});

describe('cutoff rule', () => {
  test('ops sent before a turn ends apply before the next queued turn; a flood does not delay it', async () => {
    const routes: string[] = [];
    const { s, w } = await start(
      { approval_policy: 'auto', models: { routes: { alt: { provider: 'scripted' } } }, limits: { inbox_capacity: 200 } },
      () => ({
        stream: (req) => {
          routes.push(req.route.route);
          return scriptedModel.stream(req);
        },
      }),
    );
    s.submit(msg('!sleep 100'));
    await w.next('turn_started');
    s.submit(msg('queued'));
    // At the moment the first turn's end is committed, flood the inbox with ops.
    let flooded = false;
    s.subscribe((batch) => {
      if (flooded || !batch.events.some((e) => e.msg.type === 'turn_complete')) return;
      flooded = true;
      for (let i = 0; i < 100; i++) s.submit(op({ type: 'capability_command', capability: 'session', command: 'status' }, `flood${i}`));
    });
    s.submit(op({ type: 'set_model', route: 'alt' }, 'switch'));
    await w.next('turn_complete', 2);
    await w.next('capability_output', 100);
    const types = w.events.map((e) => e.msg.type);
    const secondStart = types.indexOf('turn_started', types.indexOf('turn_started') + 1);
    expect(types.indexOf('model_changed')).toBeLessThan(secondStart);
    // Everything of the flood was enqueued after the cutoff: handled after the queued turn started.
    const firstFlood = w.events.findIndex((e) => e.submission_id?.startsWith('flood'));
    expect(firstFlood).toBeGreaterThan(secondStart);
    expect(routes).toEqual(['scripted', 'alt']);
  });
});

describe('turn limits', () => {
  test('max_model_steps fails the turn with max_model_steps_exceeded', async () => {
    const { s, w } = await start({ approval_policy: 'auto', limits: { max_model_steps: 3 } }, loopModel());
    s.submit(msg('go'));
    const failed = await w.next('turn_failed');
    expect(failed.error.code).toBe('max_model_steps_exceeded');
    expect(w.count('tool_call_end')).toBe(3);
  });

  test('the same tool call three times in a row fails with doom_loop_detected', async () => {
    const { s, w } = await start({ approval_policy: 'auto' }, loopModel(true));
    s.submit(msg('go'));
    const failed = await w.next('turn_failed');
    expect(failed.error.code).toBe('doom_loop_detected');
    expect(w.count('tool_call_end')).toBe(3); // 2 ran, the third is closed unrun
  });

  test('!fail fails the turn and the session goes on', async () => {
    const { s, w } = await start();
    s.submit(msg('!fail'));
    expect((await w.next('turn_failed')).error.code).toBe('scripted_failure');
    s.submit(msg('ok'));
    expect((await w.next('turn_complete')).last_message).toBe('echo: ok');
  });

  test('a stalled model stream fails the call after model_idle_timeout_ms', async () => {
    const { s, w } = await start({ limits: { model_idle_timeout_ms: 100 } }, ({
      async *stream(req) {
        yield { type: 'text_delta', delta: 'par' };
        await new Promise((_, reject) => req.signal.addEventListener('abort', () => reject(new Error('aborted'))));
      },
    }));
    s.submit(msg('x'));
    expect((await w.next('turn_failed')).error.code).toBe('model_idle_timeout');
  });

  test('a reply cut off by length is continued up to max_output_recovery_attempts', async () => {
    let calls = 0;
    const { s, w } = await start({ limits: { max_output_recovery_attempts: 2 } }, ({
      async *stream() {
        calls++;
        yield { type: 'text_delta', delta: `part${calls} ` };
        yield { type: 'finish', reason: 'length' };
      },
    }));
    s.submit(msg('long'));
    const done = await w.next('turn_complete');
    expect(calls).toBe(3);
    expect(done.model_calls).toBe(3);
    // One reply: one agent_message and last_message with the whole text; still cut off.
    expect(w.msgs().filter((m) => m.type === 'agent_message')).toEqual([{ type: 'agent_message', text: 'part1 part2 part3 ' }]);
    expect(done.last_message).toBe('part1 part2 part3 ');
    expect(done.stop_reason).toBe('length');
  });

  test('a continuation sees the reply so far and the note; a reply that ends completes with end_turn and one transcript item', async () => {
    const contexts: ContextItem[][] = [];
    const { s, w } = await start({ limits: { max_output_recovery_attempts: 2 } }, ({
      async *stream(req) {
        contexts.push(req.context);
        yield { type: 'text_delta', delta: contexts.length === 1 ? 'Hello, ' : contexts.length === 2 ? 'world' : 'next' };
        yield { type: 'finish', reason: contexts.length === 1 ? 'length' : 'stop' };
      },
    }));
    s.submit(msg('greet'));
    const done = await w.next('turn_complete');
    expect(done).toMatchObject({ last_message: 'Hello, world', stop_reason: 'end_turn', model_calls: 2 });
    expect(contexts[1]!.slice(-2)).toEqual([
      { role: 'assistant', text: 'Hello, ' },
      { role: 'system', text: LENGTH_CONTINUATION_NOTE },
    ]);
    // The next turn's context holds the reply once, whole; no continuation note.
    s.submit(msg('again'));
    await w.next('turn_complete', 2);
    expect(contexts[2]!.filter((i) => i.role !== 'system')).toEqual([
      { role: 'user', text: 'greet' },
      { role: 'assistant', text: 'Hello, world' },
      { role: 'user', text: 'again' },
    ]);
    expect(contexts[2]!.some((i) => i.role === 'system' && i.text === LENGTH_CONTINUATION_NOTE)).toBe(false);
  });

  test('identical calls within one step are not a doom loop; the same call in consecutive steps is', async () => {
    let n = 0;
    const { s, w } = await start({ approval_policy: 'auto' }, ({
      async *stream() {
        n++;
        if (n === 1) {
          for (const id of ['a', 'b', 'c', 'd']) yield { type: 'tool_call', call: { call_id: id, tool: 'list_dir', arguments: { path: '.' } } };
          yield { type: 'finish', reason: 'tool_calls' };
        } else {
          yield { type: 'text_delta', delta: 'done' };
          yield { type: 'finish', reason: 'stop' };
        }
      },
    }));
    s.submit(msg('go'));
    expect((await w.next('turn_complete')).tool_calls).toBe(4);
    expect(w.count('turn_failed')).toBe(0);
  });
});

/** A model that always calls list_dir (same or different arguments each step). */
function loopModel(same = false): ModelClient {
  let n = 0;
  return {
    async *stream() {
      n++;
      yield { type: 'tool_call', call: { call_id: `c${n}`, tool: 'list_dir', arguments: { path: same ? '.' : n % 2 ? '.' : './' } } };
      yield { type: 'finish', reason: 'tool_calls' };
    },
  };
}

test("a turn's first events reach subscribers before its model request is built (submit_latency)", async () => {
  // What subscribers had seen each time the model was asked; the request's context grows
  // with the history, so building it must not delay the submission's first batch.
  const seen: string[][] = [];
  let watcher: Watcher | undefined;
  const { s, w } = await start({}, {
    stream(request) {
      seen.push(watcher!.msgs().map((m) => m.type));
      return scriptedModel.stream(request);
    },
  });
  watcher = w;
  s.submit(msg('hello'));
  await w.next('turn_complete');
  s.submit(msg('again'));
  await w.next('turn_complete', 2);
  expect(seen).toHaveLength(2);
  expect(seen[0]).toEqual(['user_message', 'turn_started']);
  expect(seen[1]!.filter((t) => t === 'turn_started')).toHaveLength(2);
});
