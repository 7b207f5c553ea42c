/** Every op in an idle and in a running session, against a real SessionHost and SQLite file. */
import { afterEach, beforeEach, describe, expect, test } from 'vitest';
import { cleanup, msg, op, openHost, terminalCount, Watcher, type Harness } from './helpers/session.js';

const CONFIG = {
  approval_policy: 'auto',
  models: {
    default: 'scripted',
    routes: { alt: { provider: 'scripted', model: 'alt-model', context_window: 8000, reasoning_efforts: ['low', 'high'] } },
  },
};

let h: Harness;
beforeEach(async () => {
  h = await openHost(CONFIG);
});
afterEach(async () => {
  await h.close();
  cleanup(h.dir);
});

async function newSession(config = {}) {
  const d = await h.host.create(config);
  const s = (await h.host.open(d.session_id))!;
  return { s, w: new Watcher(s), id: d.session_id };
}

describe('idle session', () => {
  test('message starts a turn and is admitted once committed', async () => {
    const { s, w } = await newSession();
    const outcomes: string[] = [];
    const r = s.submit(msg('hello', undefined, 'm-idle'), (o) => outcomes.push(o));
    expect(r).toEqual({ ok: true, ingress_seq: 1 });
    const done = await w.next('turn_complete');
    expect(done.last_message).toBe('echo: hello');
    expect(outcomes).toEqual(['accepted']);
    expect(w.msgs('user_message')[0]).toMatchObject({ text: 'hello', mode: 'turn' });
    expect(w.count('agent_message_delta')).toBeGreaterThanOrEqual(2);
    const user = w.events.find((e) => e.msg.type === 'user_message')!;
    expect(user.submission_id).toBe('m-idle');
    // Every event inside the turn carries the turn id.
    const turnId = w.msgs('turn_started')[0]!.type === 'turn_started' ? (w.msgs('turn_started')[0] as { turn_id: string }).turn_id : '';
    for (const e of w.events.filter((e) => ['agent_message_delta', 'agent_message', 'turn_complete'].includes(e.msg.type))) {
      expect(e.turn_id).toBe(turnId);
    }
  });

  test('interrupt and exec_approval warn', async () => {
    const { s, w } = await newSession();
    s.submit(op({ type: 'interrupt', turn_id: 'turn_x' }, 'i1'));
    s.submit(op({ type: 'exec_approval', id: 'a1', decision: 'approve' }, 'e1'));
    await w.next('warning', 2);
    expect(w.msgs('warning').map((m) => (m as { message: string }).message)).toEqual([
      'no active turn to interrupt',
      'no approval request is active',
    ]);
    expect(w.events.filter((e) => e.msg.type === 'warning').map((e) => e.submission_id)).toEqual(['i1', 'e1']);
  });

  test('set_model switches route; unknown route and effort warn', async () => {
    const { s, w } = await newSession();
    s.submit(op({ type: 'set_model', route: 'alt', reasoning_effort: 'high' }));
    s.submit(op({ type: 'set_model', route: 'nope' }));
    s.submit(op({ type: 'set_model', route: 'alt', reasoning_effort: 'ultra' }));
    await w.next('warning', 2);
    expect(w.msgs('model_changed')).toEqual([
      { type: 'model_changed', route: 'alt', model: 'alt-model', reasoning_effort: 'high', context_window: 8000 },
    ]);
    expect(s.descriptor().model.route).toBe('alt');
  });

  test('capability_command: session status and title; unknown capability and command warn', async () => {
    const { s, w } = await newSession();
    s.submit(op({ type: 'capability_command', capability: 'session', command: 'title', input: 'My work' }));
    s.submit(op({ type: 'capability_command', capability: 'session', command: 'status' }));
    s.submit(op({ type: 'capability_command', capability: 'git', command: 'status' }));
    s.submit(op({ type: 'capability_command', capability: 'session', command: 'explode' }));
    await w.next('warning', 2);
    const outs = w.msgs('capability_output') as Array<{ command: string; output: Record<string, unknown> }>;
    expect(outs[0]).toMatchObject({ command: 'title', output: { title: 'My work' } });
    expect(outs[1]!.output).toMatchObject({ status: 'idle', title: 'My work', active_turn_id: null });
    expect(s.descriptor().title).toBe('My work');
    expect((w.msgs('warning') as Array<{ message: string }>).map((m) => m.message)).toEqual([
      'unknown capability "git"',
      'unknown command "explode" for capability "session" (commands: status, title, tools, compact, budget, approval_policy)',
    ]);
  });

  test('resume_session: a valid checkpoint yields its context; an unknown one warns', async () => {
    const other = await newSession({ title: 'other' });
    other.s.submit(msg('remember me'));
    await other.w.next('turn_complete');
    const { s, w } = await newSession();
    s.submit(op({ type: 'resume_session', session_id: other.id }));
    s.submit(op({ type: 'resume_session', session_id: 's_missing' }));
    await w.next('warning');
    const req = (await w.next('session_resume_requested')) as { session_id: string; context: Record<string, unknown> };
    expect(req.session_id).toBe(other.id);
    expect(req.context.title).toBe('other');
    // docs/protocol.md: the other session's descriptor summary, never its transcript.
    expect(req.context).toEqual({
      session_id: other.id,
      title: 'other',
      cwd: other.s.state.cwd,
      model: other.s.state.model,
      head_sequence: other.s.headSequence(),
      status: 'idle',
    });
    expect(JSON.stringify(req.context)).not.toContain('remember me');
  });
});

describe('running session', () => {
  test('queued messages start their own turns in order; steer joins the running turn', async () => {
    const { s, w } = await newSession();
    s.submit(msg('!sleep 200'));
    await w.next('turn_started');
    s.submit(msg('second'));
    s.submit(msg('steer me', 'steer'));
    s.submit(msg('third', 'queue'));
    await w.next('turn_complete', 3);
    const users = w.msgs('user_message') as Array<{ text: string; mode: string }>;
    expect(users.map((u) => [u.text, u.mode])).toEqual([
      ['!sleep 200', 'turn'],
      ['second', 'queued'],
      ['steer me', 'steer'],
      ['third', 'queued'],
    ]);
    const done = w.msgs('turn_complete') as Array<{ last_message: string; model_calls: number }>;
    // The steer joined the first turn's next model call.
    expect(done[0]).toMatchObject({ last_message: 'echo: steer me', model_calls: 2 });
    expect(done[1]!.last_message).toBe('echo: second');
    expect(done[2]!.last_message).toBe('echo: third');
    expect(terminalCount(w.events)).toBe(w.count('turn_started'));
  });

  test('interrupt with the active turn id ends the turn; another id warns', async () => {
    const { s, w } = await newSession();
    s.submit(msg('!sleep 5000'));
    const started = await w.next('turn_started');
    await w.next('agent_message_delta');
    s.submit(op({ type: 'interrupt', turn_id: 'turn_other' }));
    await w.next('warning');
    const t0 = Date.now();
    s.submit(op({ type: 'interrupt', turn_id: started.turn_id }, 'int-1'));
    const end = await w.next('turn_interrupted');
    expect(Date.now() - t0).toBeLessThan(500);
    expect(end.reason).toBe('interrupted');
    expect((w.msgs('warning')[0] as { message: string }).message).toContain(`active: "${started.turn_id}"`);
    expect(w.events.find((e) => e.msg.type === 'turn_interrupted')!.submission_id).toBe('int-1');
    expect(s.descriptor().status).toBe('idle');
    // The transcript stays valid: the next turn works.
    s.submit(msg('after'));
    expect((await w.next('turn_complete')).last_message).toBe('echo: after');
  });

  test('set_model during a turn takes effect at the next model call', async () => {
    const routes: string[] = [];
    await h.close();
    cleanup(h.dir);
    const { scriptedModel } = await import('../src/model/scripted.js');
    h = await openHost(CONFIG, {
      modelClient: (route) => ({
        stream: (req) => {
          routes.push(req.route.route);
          return scriptedModel.stream(req);
        },
      }),
    });
    const { s, w } = await newSession();
    s.submit(msg('!sleep 150'));
    await w.next('turn_started');
    s.submit(msg('next'));
    s.submit(op({ type: 'set_model', route: 'alt' }));
    await w.next('turn_complete', 2);
    expect(routes).toEqual(['scripted', 'alt']);
  });

  test('exec_approval with a stale id warns while an approval is pending', async () => {
    const { s, w } = await newSession({ approval_policy: 'ask' });
    s.submit(msg('!sh echo hi'));
    const req = await w.next('exec_approval_request');
    s.submit(op({ type: 'exec_approval', id: 'appr_old', decision: 'approve' }));
    await w.next('warning');
    expect(s.descriptor()).toMatchObject({ status: 'awaiting_approval', pending_approval: req });
    s.submit(op({ type: 'exec_approval', id: req.approval_id, decision: 'approve' }));
    expect((await w.next('turn_complete')).last_message).toBe('command exited with code 0');
  });
});
