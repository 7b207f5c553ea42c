/**
 * The model's request through a real daemon and socket, against local provider servers
 * (docs/context.md): system prompt precedence (session, route, config file, built-in
 * default) and `system_prompt_bytes`; per-message overrides recorded on `turn_started`; a
 * saved route removed between restarts falls back to the default; a provider overflow
 * error gets one compaction and one retry (OpenAI and Anthropic); the Anthropic path's
 * thinking (`agent_reasoning_delta`, blocks sent back in the tool loop) and cached tokens;
 * tool output cut to 64 KiB for the model while the event keeps it whole.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, test } from 'vitest';
import type { Msg, TestClient } from './helpers/client.js';
import { tempDataDir } from './helpers/daemon.js';
import { ev, events, startFakeAnthropic, status as anthropicStatus, textReply } from './helpers/fake-anthropic.js';
import { chunk, sse, status } from './helpers/fake-openai.js';
import { daemonPool } from './helpers/pool.js';

const pool = daemonPool();
const boot = pool.boot;
const fakeOpenAI = pool.fakeOpenAI;

const reply = (text: string) => sse([chunk.text(text), chunk.finish('stop'), chunk.usage(50, 5)]);

/** A daemon whose default route is a local OpenAI-compatible server, and an attached session on it. */
async function sessionOnOpenAI() {
  const fake = await fakeOpenAI();
  const { c, dir } = await boot({ approval_policy: 'auto', models: { default: 'o', routes: { o: { provider: 'openai', model: 'm', base_url: fake.baseURL } } } });
  const s = (await c.createSession({ cwd: dir })).session_id as string;
  await c.attach(s);
  return { fake, c, dir, s };
}

async function turn(c: TestClient, s: string, text: string, extra: Record<string, unknown> = {}): Promise<Msg> {
  const id = `m-${Math.random().toString(36).slice(2)}`;
  const answer = await c.submit(s, id, { type: 'message', text, ...extra });
  expect(answer.type).toBe('queued');
  return c.waitTurnEnd(s, id, 20_000);
}

describe('system prompt', () => {
  test('precedence: the session\'s own, then the route\'s, then the config file\'s, else the built-in default naming cwd, tools and date', async () => {
    const fake = await fakeOpenAI();
    const dataDir = tempDataDir();
    writeFileSync(join(dataDir, 'prompt.txt'), 'You are the configured assistant.');
    const { c, dir } = await boot(
      {
        approval_policy: 'auto',
        system_prompt: { file: 'prompt.txt' },
        models: {
          default: 'plain',
          routes: {
            plain: { provider: 'openai', model: 'm', base_url: fake.baseURL },
            routed: { provider: 'openai', model: 'm', base_url: fake.baseURL, system_prompt: 'You are the route assistant.' },
          },
        },
      },
      dataDir,
    );
    const own = await c.createSession({ cwd: dir, system_prompt: 'You are the session’s own assistant.' });
    const plain = await c.createSession({ cwd: dir });
    for (const s of [own, plain]) await c.attach(s.session_id);
    const configured = (s: string) => c.events(s).find((m) => m.type === 'session_configured')!;
    await c.until(() => (configured(plain.session_id) ? true : undefined));
    expect(configured(own.session_id).system_prompt_bytes).toBe(Buffer.byteLength('You are the session’s own assistant.'));
    expect(configured(plain.session_id).system_prompt_bytes).toBe(0);

    const systems = () => fake.requests.map((r) => r.body.messages.filter((m: { role: string }) => m.role === 'system'));
    fake.enqueue(reply('a'), reply('b'), reply('c'), reply('d'));
    await turn(c, own.session_id, 'hi');
    await turn(c, plain.session_id, 'hi');
    await turn(c, plain.session_id, 'hi', { overrides: { route: 'routed' } });
    await turn(c, own.session_id, 'hi', { overrides: { route: 'routed' } });
    const [a, b, r, o] = systems();
    // Exactly one system message, first.
    for (const req of fake.requests) expect(req.body.messages[0].role).toBe('system');
    expect(a).toEqual([{ role: 'system', content: 'You are the session’s own assistant.' }]);
    expect(b).toEqual([{ role: 'system', content: 'You are the configured assistant.' }]);
    expect(r).toEqual([{ role: 'system', content: 'You are the route assistant.' }]);
    expect(o).toEqual([{ role: 'system', content: 'You are the session’s own assistant.' }]);
    // The prompt is never in the transcript: no user or assistant message repeats it.
    expect(JSON.stringify(fake.requests.map((q) => q.body.messages.slice(1)))).not.toContain('assistant.');
  }, 60_000);

  test('the built-in default names the cwd, the tools and the date (OpenAI reasoning_content streams as thinking); a session prompt over 64 KiB is refused', async () => {
    const { fake, c, dir, s } = await sessionOnOpenAI();
    // reasoning_content deltas (vLLM, DeepSeek, llama.cpp) become agent_reasoning_delta events.
    const thinking = (text: string) => ({ id: 'r', object: 'chat.completion.chunk', created: 0, model: 'fake', choices: [{ index: 0, delta: { reasoning_content: text }, finish_reason: null }] });
    fake.enqueue(sse([thinking('ponder'), thinking('ing'), chunk.text('ok'), chunk.finish('stop'), chunk.usage(50, 5)]));
    await turn(c, s, 'hi');
    const types = c.events(s).map((m) => m.type);
    expect(c.events(s).filter((m) => m.type === 'agent_reasoning_delta').map((m) => m.delta).join('')).toBe('pondering');
    expect(types.indexOf('agent_reasoning_delta')).toBeLessThan(types.indexOf('agent_message_delta'));
    const system = fake.requests[0]!.body.messages[0].content as string;
    expect(system).toContain(dir);
    for (const tool of ['shell', 'read_file', 'write_file', 'list_dir']) expect(system).toContain(tool);
    expect(system).toContain(new Date().toISOString().slice(0, 10));
    const refused = await c.request({ type: 'create_session', config: { cwd: dir, system_prompt: 'x'.repeat(64 * 1024 + 1) } });
    expect(refused).toMatchObject({ type: 'error', code: 'invalid_frame' });
    expect(refused.message).toMatch(/system_prompt/);
  }, 60_000);
});

describe('overrides and route fallback', () => {
  test('message.overrides apply to that turn only and are recorded on turn_started; a steer with overrides warns', async () => {
    const fake = await fakeOpenAI();
    const { c, dir } = await boot({
      approval_policy: 'auto',
      models: { routes: { o: { provider: 'openai', model: 'other-model', base_url: fake.baseURL, reasoning_efforts: ['low', 'high'] } } },
    });
    const s = (await c.createSession({ cwd: dir })).session_id as string;
    await c.attach(s);
    fake.enqueue(reply('from o'));
    const end = await turn(c, s, 'hi', { overrides: { route: 'o', reasoning_effort: 'high' } });
    expect(end).toMatchObject({ type: 'turn_complete', last_message: 'from o' });
    expect(fake.requests[0]!.body).toMatchObject({ model: 'other-model', reasoning_effort: 'high' });
    const started = c.events(s).filter((m) => m.type === 'turn_started');
    expect(started[0]!.overrides).toEqual({ route: 'o', reasoning_effort: 'high' });
    // The session's own route is unchanged: the next turn is scripted again.
    expect(await turn(c, s, 'again')).toMatchObject({ last_message: 'echo: again' });
    expect(c.events(s).filter((m) => m.type === 'turn_started')[1]!.overrides).toBeUndefined();
    // An unknown route in overrides: a warning, and the turn runs on the session's route.
    expect(await turn(c, s, 'third', { overrides: { route: 'nope' } })).toMatchObject({ last_message: 'echo: third' });
    expect(c.events(s).some((m) => m.type === 'warning' && /overrides\.route: unknown model route "nope"/.test(m.message))).toBe(true);
    // A steer carries no overrides.
    const long = `m-long`;
    await c.submit(s, long, { type: 'message', text: '!sleep 400' });
    await c.waitForEvent(s, (m, e) => m.type === 'turn_started' && e.submission_id === long);
    await c.submit(s, 'steer-1', { type: 'message', text: 'also this', mode: 'steer', overrides: { route: 'o' } });
    await c.waitTurnEnd(s, long);
    expect(c.events(s).some((m) => m.type === 'warning' && /ignored for this steer/.test(m.message))).toBe(true);
    expect(fake.requests).toHaveLength(1);
  }, 60_000);

  test('a saved route removed between restarts falls back to the default with model_changed and a warning', async () => {
    const dir = tempDataDir();
    const first = await boot({ approval_policy: 'auto', models: { routes: { gone: { provider: 'scripted', context_window: 9000 } } } }, dir);
    const s = (await first.c.createSession({ cwd: dir, model_route: 'gone' })).session_id as string;
    await first.c.attach(s);
    expect(await turn(first.c, s, 'before')).toMatchObject({ type: 'turn_complete' });
    await first.d.stop();
    const second = await boot({ approval_policy: 'auto' }, dir);
    const attached = await second.c.attach(s, { after_sequence: 0 });
    expect(attached.session.model).toMatchObject({ route: 'scripted', context_window: null });
    await second.c.waitForSequence(s, attached.head_sequence as number);
    // The fallback's events commit with the hydration's first write, which may follow the attach.
    await second.c.waitForEvent(s, (m) => m.type === 'model_changed' && m.route === 'scripted');
    const events = second.c.events(s);
    expect(events.filter((m) => m.type === 'model_changed').at(-1)).toMatchObject({ route: 'scripted', model: 'scripted' });
    expect(events.some((m) => m.type === 'warning' && m.message.includes('"gone" is no longer configured'))).toBe(true);
    expect(await turn(second.c, s, 'after')).toMatchObject({ type: 'turn_complete', last_message: 'echo: after' });
  }, 60_000);
});

describe('provider overflow', () => {
  test('OpenAI context_length_exceeded: one compaction (reason overflow), one retry; a second overflow fails context_window_exceeded', async () => {
    const { fake, c, dir, s } = await sessionOnOpenAI();
    fake.enqueue(reply('one'), reply('two'));
    await turn(c, s, 'first message');
    await turn(c, s, 'second message');
    const overflow = status(400, { error: { message: "This model's maximum context length is 8192 tokens", code: 'context_length_exceeded', type: 'invalid_request_error' } });
    fake.enqueue(overflow, reply('the summary of it all'), reply('retried fine'));
    expect(await turn(c, s, 'third message')).toMatchObject({ type: 'turn_complete', last_message: 'retried fine' });
    const compacted = c.events(s).filter((m) => m.type === 'context_compacted');
    expect(compacted).toHaveLength(1);
    expect(compacted[0]).toMatchObject({ reason: 'overflow', summary: 'the summary of it all' });
    // The retry saw the summary instead of the older messages.
    const retry = fake.requests.at(-1)!.body.messages as Array<{ role: string; content: string }>;
    expect(JSON.stringify(retry)).toContain('the summary of it all');
    expect(JSON.stringify(retry)).not.toContain('first message');
    // Overflow again after the one compaction: context_window_exceeded.
    fake.enqueue(overflow, reply('another summary'), overflow);
    const failed = await turn(c, s, 'fourth message');
    expect(failed.type).toBe('turn_failed');
    expect(failed.error.code).toBe('context_window_exceeded');
    expect(await turn(c, s, 'x', { overrides: { route: 'scripted' } })).toMatchObject({ type: 'turn_complete' });
  }, 60_000);
});

describe('anthropic in a session', () => {
  test('thinking streams as agent_reasoning_delta, blocks go back in the tool loop, system prompt and cached tokens; "prompt is too long" compacts and retries', async () => {
    const fake = pool.track(await startFakeAnthropic());
    const route = { provider: 'anthropic', model: 'claude-test', api_key_env: 'FAKE_ANTHROPIC_KEY', base_url: fake.baseURL, context_window: 200000, reasoning_efforts: ['low'] };
    const { c, dir } = await boot({ approval_policy: 'auto', models: { default: 'claude', routes: { claude: route } } }, tempDataDir(), { FAKE_ANTHROPIC_KEY: 'k' });
    const s = (await c.createSession({ cwd: dir, system_prompt: 'Be brief.' })).session_id as string;
    await c.attach(s);
    await c.submit(s, 'effort', { type: 'set_model', route: 'claude', reasoning_effort: 'low' });
    writeFileSync(join(dir, 'notes.txt'), 'teal');
    fake.enqueue(
      events([
        ev.start({ input_tokens: 100, cache_read_input_tokens: 60, cache_creation_input_tokens: 0, output_tokens: 1 }),
        ...ev.thinkingBlock(0, ['Let me ', 'read it.'], ['sig-1']),
        ...ev.toolBlock(1, 'toolu_1', 'read_file', '{"path":"notes.txt"}'),
        ev.delta('tool_use', { output_tokens: 12 }),
        ev.messageStop(),
      ]),
      events(textReply(['It says teal.'])),
    );
    expect(await turn(c, s, 'read notes.txt')).toMatchObject({ type: 'turn_complete', last_message: 'It says teal.' });
    const msgs = c.events(s);
    expect(msgs.filter((m) => m.type === 'agent_reasoning_delta').map((m) => m.delta).join('')).toBe('Let me read it.');
    const usage = msgs.find((m) => m.type === 'token_usage')!;
    expect(usage.usage).toMatchObject({ input_tokens: 160, cached_input_tokens: 60, reasoning_tokens: 0 });
    const [first, second] = fake.requests;
    expect(first!.body.system[0].text).toBe('Be brief.');
    // The follow-up call of the tool loop sends the thinking block back, signature included.
    const assistant = second!.body.messages.find((m: { role: string }) => m.role === 'assistant');
    expect(assistant.content[0]).toEqual({ type: 'thinking', thinking: 'Let me read it.', signature: 'sig-1' });

    // "prompt is too long": one compaction, one retry.
    fake.enqueue(
      anthropicStatus(400, { type: 'error', error: { type: 'invalid_request_error', message: 'prompt is too long: 210000 tokens > 200000 maximum' } }),
      events(textReply(['Earlier: the notes say teal.'])),
      events(textReply(['Still teal.'])),
    );
    expect(await turn(c, s, 'and now?')).toMatchObject({ type: 'turn_complete', last_message: 'Still teal.' });
    expect(c.events(s).find((m) => m.type === 'context_compacted')).toMatchObject({ reason: 'overflow', summary: 'Earlier: the notes say teal.' });
    expect(JSON.stringify(fake.requests.at(-1)!.body.messages)).toContain('Earlier: the notes say teal.');
  }, 60_000);
});

describe('tool output to the model', () => {
  test('cut to 64 KiB (head, marker, tail) for the model; the tool_call_end event keeps it whole', async () => {
    const { fake, c, dir, s } = await sessionOnOpenAI();
    fake.enqueue(
      sse([chunk.tool(0, { id: 'call_1', name: 'shell', args: JSON.stringify({ command: "printf HEAD; awk 'BEGIN { for (i = 0; i < 200000; i++) printf \"x\" }'; printf TAIL" }) }), chunk.finish('tool_calls')]),
      reply('done'),
    );
    expect(await turn(c, s, 'make output')).toMatchObject({ type: 'turn_complete' });
    const end = c.events(s).find((m) => m.type === 'tool_call_end')!;
    expect(end.output).toHaveLength(200_008);
    const sent = fake.requests[1]!.body.messages.find((m: { role: string }) => m.role === 'tool').content as string;
    expect(Buffer.byteLength(sent)).toBeLessThanOrEqual(64 * 1024);
    expect(sent.startsWith('HEADxxx')).toBe(true);
    expect(sent.endsWith('xxxTAIL')).toBe(true);
    expect(sent).toMatch(/\[… \d+ bytes of output cut here: 200008 bytes in all …\]/);
  }, 60_000);
});
