import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import {
  CLOSE_CODES,
  EventMsgSchema,
  LIMITS,
  TurnFailureCodeSchema,
  PROTOCOL_VERSION,
  buildJsonSchema,
  parseClientFrame,
  parseServerFrame,
  type EventMsg,
  type ServerFrame,
} from '../protocol/index.js';

const j = (v: unknown) => JSON.stringify(v);
const ok = (v: unknown) => {
  const r = parseClientFrame(j(v));
  if (!r.ok) throw new Error(`expected ok, got ${r.error.code}: ${r.error.message}`);
  return r.frame;
};
const bad = (text: string) => {
  const r = parseClientFrame(text);
  if (r.ok) throw new Error(`expected rejection of ${text.slice(0, 200)}`);
  return r.error;
};
const submit = (op: unknown, id: unknown = 'sub-1') => ({ type: 'submit', session_id: 's1', submission: { id, op } });

describe('client frames: valid', () => {
  it('parses every frame type', () => {
    expect(ok({ type: 'hello', protocol: PROTOCOL_VERSION, client: 'cli/1.0', token: 'T' }).type).toBe('hello');
    expect(ok({ type: 'hello', protocol: 2 }).type).toBe('hello');
    const cs = ok({ type: 'create_session', req_id: 'r1' });
    expect(cs).toEqual({ type: 'create_session', req_id: 'r1', config: {} });
    ok({ type: 'create_session', req_id: 'r1', config: { model_route: 'scripted', cwd: '/tmp', approval_policy: 'ask', title: 'héllo' } });
    ok({ type: 'list_sessions', req_id: 'r2', limit: 10, before: 'sess:1' });
    ok({ type: 'attach', req_id: 'r3', session_id: 's1', replay_batches: 0, after_sequence: 0 });
    ok({ type: 'detach', req_id: 'r4', session_id: 's1' });
    ok({ type: 'history', req_id: 'r5', session_id: 's1', before_sequence: 5, limit: 3 });
  });

  it('parses every op', () => {
    const ops = [
      { type: 'message', text: 'hi' },
      { type: 'message', text: 'hi', mode: 'steer' },
      { type: 'interrupt', turn_id: 't1' },
      { type: 'exec_approval', id: 'a1', decision: 'approve_for_session' },
      { type: 'set_model', route: 'scripted', reasoning_effort: 'high' },
      { type: 'capability_command', capability: 'cap', command: 'run', arguments: { a: [1, 2] }, input: 'x' },
      { type: 'capability_command', capability: 'cap', command: 'run' },
      { type: 'resume_session', session_id: 's2' },
    ];
    for (const op of ops) expect(ok(submit(op))).toMatchObject({ type: 'submit', submission: { op } });
  });

  it('accepts boundary sizes', () => {
    ok(submit({ type: 'message', text: 'é'.repeat(LIMITS.messageTextMaxBytes / 2) }));
    ok(submit({ type: 'message', text: 'x' }, 'a'.repeat(128)));
    ok(submit({ type: 'capability_command', capability: 'é'.repeat(128), command: 'c' }));
  });
});

describe('client frames: rejected', () => {
  it('not JSON / not an object', () => {
    expect(bad('{nope').code).toBe('invalid_frame');
    expect(bad('[1,2]').code).toBe('invalid_frame');
    expect(bad('"hello"').code).toBe('invalid_frame');
    expect(bad('null').code).toBe('invalid_frame');
  });

  it('unknown or missing type', () => {
    const e = bad(j({ type: 'nope', req_id: 'r9' }));
    expect(e).toMatchObject({ code: 'invalid_frame', req_id: 'r9' });
    expect(e.message).toMatch(/^type: /);
    expect(bad(j({ req_id: 'r9' })).code).toBe('invalid_frame');
  });

  it('unknown field', () => {
    const e = bad(j({ type: 'detach', req_id: 'r1', session_id: 's1', extra: 1 }));
    expect(e).toMatchObject({ code: 'invalid_frame', req_id: 'r1' });
    expect(e.message).toContain('extra');
    expect(bad(j({ type: 'create_session', req_id: 'r1', config: { colour: 'red' } })).message).toMatch(/^config: .*colour/);
    expect(bad(j({ ...submit({ type: 'message', text: 'x' }), extra: true })).code).toBe('invalid_frame');
  });

  it('bad identifiers in frames', () => {
    const e = bad(j({ type: 'attach', req_id: 'r1', session_id: 'bad id!' }));
    expect(e).toMatchObject({ code: 'invalid_frame', req_id: 'r1' });
    expect(e.message).toBe('session_id: must be 1–128 bytes of [A-Za-z0-9._:-]');
    expect(bad(j({ type: 'attach', req_id: 'r1', session_id: 's'.repeat(129) })).code).toBe('invalid_frame');
    expect(bad(j({ type: 'attach', req_id: 'r1', session_id: 'sé' })).code).toBe('invalid_frame');
    expect(bad(j({ type: 'attach', req_id: '', session_id: 's' })).code).toBe('invalid_frame');
    expect(bad(j({ type: 'history', req_id: 'r', session_id: 's', before_sequence: 0 })).code).toBe('invalid_frame');
    expect(bad(j({ ...submit({ type: 'message', text: 'x' }), session_id: 'a/b' })).code).toBe('invalid_frame');
  });

  it('invalid submissions echo submission_id', () => {
    const cases: [unknown, unknown, RegExp][] = [
      [{ type: 'launch' }, 'sub-1', /^submission\.op\.type: /],
      [{ type: 'message', text: 'x', extra: 1 }, 'sub-1', /^submission\.op: unknown field "extra"/],
      [{ type: 'message', text: '' }, 'sub-1', /^submission\.op\.text: /],
      [{ type: 'message', text: 'é'.repeat(LIMITS.messageTextMaxBytes / 2 + 1) }, 'sub-1', /^submission\.op\.text: /],
      [{ type: 'capability_command', capability: 'c', command: 'r', arguments: { s: 'x'.repeat(64 * 1024) } }, 'sub-1', /^submission\.op\.arguments: /],
      [{ type: 'capability_command', capability: 'c', command: 'r', input: 'x'.repeat(64 * 1024) }, 'sub-1', /^submission\.op\.input: /],
      [{ type: 'capability_command', capability: 'é'.repeat(129), command: 'r' }, 'sub-1', /^submission\.op\.capability: /],
      [{ type: 'interrupt', turn_id: 't 1' }, 'sub-1', /^submission\.op\.turn_id: /],
      [{ type: 'message', text: 'x' }, 'bad id', /^submission\.id: /],
      [{ type: 'message', text: 'x' }, 'i'.repeat(129), /^submission\.id: /],
    ];
    for (const [op, id, msg] of cases) {
      const e = bad(j(submit(op, id)));
      expect(e.code).toBe('invalid_submission');
      expect(e.submission_id).toBe(id);
      expect(e.message).toMatch(msg);
    }
    const noId = bad(j(submit({ type: 'message', text: 'x' }, 42)));
    expect(noId.code).toBe('invalid_submission');
    expect(noId.submission_id).toBeUndefined();
  });

  it('oversize frame', () => {
    expect(bad(' '.repeat(LIMITS.frameMaxBytes + 1)).code).toBe('invalid_frame');
  });

  it('deeply nested capability arguments are refused as too deep, not as too big', () => {
    const nested = (depth: number, open = '[', close = ']') => `${open.repeat(depth)}1${close.repeat(depth)}`;
    const capability = (field: 'arguments' | 'input', json: string) =>
      `{"type":"submit","session_id":"s1","submission":{"id":"sub-1","op":{"type":"capability_command","capability":"c","command":"r","${field}":${json}}}}`;
    // 5 000 levels is 10 KB, well under the 64 KiB bound: the answer names the real problem.
    const deep = bad(capability('arguments', nested(5000)));
    expect(deep).toMatchObject({ code: 'invalid_submission', submission_id: 'sub-1' });
    expect(deep.message).toBe(`submission.op.arguments: must be a JSON value nested at most ${LIMITS.jsonMaxDepth} levels deep`);
    expect(bad(capability('input', nested(100_000))).message).toMatch(/^submission\.op\.input: .*nested at most 64 levels/);
    // Objects count like arrays; the bound itself is accepted.
    const objects = (depth: number) => `${'{"a":'.repeat(depth)}1${'}'.repeat(depth)}`;
    expect(ok(JSON.parse(capability('arguments', nested(LIMITS.jsonMaxDepth))))).toMatchObject({ type: 'submit' });
    expect(ok(JSON.parse(capability('input', objects(LIMITS.jsonMaxDepth))))).toMatchObject({ type: 'submit' });
    expect(bad(capability('arguments', nested(LIMITS.jsonMaxDepth + 1))).message).toMatch(/nested at most/);
    expect(bad(capability('input', objects(LIMITS.jsonMaxDepth + 1))).message).toMatch(/nested at most/);
    // Shallow but big is still refused for its size.
    expect(bad(capability('arguments', `[${'"x",'.repeat(20_000)}1]`)).message).toMatch(/at most 65536 bytes/);
  });
});

describe('server frames', () => {
  const model = { route: 'scripted', model: 'scripted', reasoning_effort: null, context_window: null };
  const usage = { input_tokens: 1, output_tokens: 2 };
  const approval = { type: 'exec_approval_request', approval_id: 'a1', call_id: 'c1', tool: 'shell', arguments: { command: 'ls' }, cwd: '/tmp' } as const;
  const msgs: EventMsg[] = [
    { type: 'session_configured', session_id: 's1', model, cwd: '/tmp', approval_policy: 'auto', title: null },
    { type: 'user_message', text: 'hi', mode: 'turn' },
    { type: 'turn_started', turn_id: 't1' },
    { type: 'agent_message_delta', delta: 'ec' },
    { type: 'agent_message', text: 'echo: hi' },
    { type: 'tool_call_begin', call_id: 'c1', tool: 'shell', arguments: { command: 'ls' } },
    { type: 'exec_output_delta', call_id: 'c1', stream: 'stdout', chunk: 'a\n' },
    { type: 'tool_call_end', call_id: 'c1', status: 'ok', output: 'a\n', exit_code: 0, duration_ms: 3 },
    { type: 'tool_call_end', call_id: 'c1', status: 'denied', output: '', duration_ms: 0 },
    approval,
    { type: 'approval_resolved', approval_id: 'a1', decision: 'deny' },
    { type: 'token_usage', usage, total: usage },
    { type: 'turn_resumed', attempt: 1 },
    { type: 'turn_complete', last_message: null, model_calls: 1, tool_calls: 0, failed_tool_calls: 0, usage, duration_ms: 5 },
    { type: 'turn_interrupted', reason: 'interrupted' },
    { type: 'turn_failed', error: { code: 'model_error', message: 'boom' } },
    { type: 'model_changed', ...model },
    { type: 'warning', message: 'no active turn to interrupt' },
    { type: 'session_resume_requested', session_id: 's0', context: { summary: 'x' } },
    { type: 'capability_output', capability: 'cap', command: 'run', output: [1] },
    { type: 'subagent_started', call_id: 'call_1', child_session_id: 's_child' },
    { type: 'subagent_finished', call_id: 'call_1', child_session_id: 's_child', status: 'complete' },
    { type: 'agent_reasoning_delta', delta: 'thinking' },
    { type: 'context_compacted', reason: 'auto', items_before: 9, items_after: 3, tokens_before: 1700, tokens_after: 400, summary: 'summary: a | b' },
  ];
  const session = {
    session_id: 's1', title: 'T', created_at: 1, updated_at: 2, status: 'awaiting_approval', model, cwd: '/tmp',
    approval_policy: 'ask', head_sequence: 3, active_turn_id: 't1', pending_approval: approval, queued_turns: 0,
    parent_session_id: 's0', parent_call_id: 'call_1', pending_child_approval: { child_session_id: 's_child', request: approval },
    context: { estimated_tokens: 120, context_window: null },
    token_budget: null,
  } as const;
  const batch = { type: 'batch', session_id: 's1', sequence: 1, committed_at: 10, events: msgs.map((msg) => ({ submission_id: 'sub-1', turn_id: null, ts: 9, msg })) } as const;
  const frames: ServerFrame[] = [
    { type: 'welcome', protocol: 1, server: 'agentd/0.1.0' },
    { type: 'error', code: 'invalid_submission', message: 'x', submission_id: 'sub-1' },
    { type: 'session_created', req_id: 'r1', session },
    { type: 'sessions', req_id: 'r2', sessions: [session], next_before: null },
    { type: 'attached', req_id: 'r3', session, head_sequence: 3, next_before_sequence: null },
    { type: 'detached', req_id: 'r4', session_id: 's1' },
    { type: 'history', req_id: 'r5', session_id: 's1', batches: [batch], next_before_sequence: 1 },
    { type: 'queued', session_id: 's1', submission_id: 'sub-1', ingress_seq: 0 },
    { type: 'admitted', session_id: 's1', submission_id: 'sub-1', outcome: 'already_accepted' },
    batch,
  ];

  it('parses every event msg and server frame', () => {
    expect(new Set(msgs.map((m) => m.type)).size).toBe(EventMsgSchema.options.length);
    for (const f of frames) expect(parseServerFrame(j(f))).toEqual(f);
  });

  it('turn_failed carries one of the documented failure codes', () => {
    const failed = (code: string) => j({ ...batch, events: [{ submission_id: null, turn_id: 't1', ts: 1, msg: { type: 'turn_failed', error: { code, message: 'm' } } }] });
    for (const code of TurnFailureCodeSchema.options) expect(() => parseServerFrame(failed(code))).not.toThrow();
    expect(() => parseServerFrame(failed('something_else'))).toThrow(/code/);
  });

  it('rejects bad server frames', () => {
    expect(() => parseServerFrame('nope')).toThrow();
    expect(() => parseServerFrame(j({ type: 'queued', session_id: 's1' }))).toThrow(/submission_id/);
    expect(() => parseServerFrame(j({ ...batch, events: [{ submission_id: null, turn_id: null, ts: 1, msg: { type: 'zzz' } }] }))).toThrow();
  });
});

describe('close codes', () => {
  it('are the ones docs/protocol.md lists', () => {
    const doc = readFileSync(fileURLToPath(new URL('../docs/protocol.md', import.meta.url)), 'utf8');
    expect(CLOSE_CODES).toMatchObject({ protocol: 4400, unauthorized: 4401, invalidUtf8: 1007, tooBig: 1009, goingAway: 1001 });
    for (const code of Object.values(CLOSE_CODES)) expect(doc, `docs/protocol.md lists close code ${code}`).toContain(`**${code}**`);
  });
});

describe('schema.json', () => {
  it('is up to date', () => {
    const path = fileURLToPath(new URL('../protocol/schema.json', import.meta.url));
    let committed = '';
    try {
      committed = readFileSync(path, 'utf8');
    } catch {
      /* missing */
    }
    expect(committed === buildJsonSchema(), 'protocol/schema.json is stale: run `npm run schema`').toBe(true);
  });
});
