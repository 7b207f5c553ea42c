/**
 * Anthropic routes from configuration to a session: config validation of the route
 * fields, and a thinking, tool-using turn through the real runtime against a local
 * Messages SSE server (the session ignores the new reasoning chunks for now).
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, test } from 'vitest';
import { parseConfig, resolveRoutes } from '../src/config/config.js';
import { ev, events, startFakeAnthropic, textReply, type FakeAnthropic } from './helpers/fake-anthropic.js';
import { cleanup, msg, op, openHost, Watcher, type Harness } from './helpers/session.js';

const route = { provider: 'anthropic', model: 'claude-test', api_key_env: 'FAKE_ANTHROPIC_KEY', context_window: 200000 };

describe('anthropic route configuration', () => {
  test('max_tokens and reasoning efforts resolve onto the route', () => {
    const config = parseConfig({ models: { routes: { claude: { ...route, max_tokens: 4096, reasoning_efforts: ['low', 'high', '20000'] } } } });
    expect(resolveRoutes(config).get('claude')).toEqual({
      route: 'claude',
      provider: 'anthropic',
      model: 'claude-test',
      api_key_env: 'FAKE_ANTHROPIC_KEY',
      context_window: 200000,
      reasoning_efforts: ['low', 'high', '20000'],
      max_tokens: 4096,
    });
  });

  test('clear errors: model required, efforts need a thinking budget, max_tokens only for anthropic', () => {
    expect(() => parseConfig({ models: { routes: { c: { provider: 'anthropic' } } } })).toThrow(/models\.routes\.c\.model: required for provider "anthropic"/);
    expect(() => parseConfig({ models: { routes: { c: { ...route, reasoning_efforts: ['turbo'] } } } })).toThrow(/models\.routes\.c\.reasoning_efforts: .*"turbo"/);
    expect(() => parseConfig({ models: { routes: { c: { ...route, reasoning_efforts: ['toString'] } } } })).toThrow(/"toString"/);
    expect(() => parseConfig({ models: { routes: { c: { ...route, reasoning_efforts: ['1023'] } } } })).toThrow(/"1023"/);
    expect(() => parseConfig({ models: { routes: { c: { provider: 'openai', model: 'm', max_tokens: 10 } } } })).toThrow(/models\.routes\.c\.max_tokens: only for provider "anthropic"/);
    expect(() => parseConfig({ models: { routes: { c: { ...route, max_tokens: 0 } } } })).toThrow(/max_tokens/);
  });
});

describe('anthropic route in a session', () => {
  let fake: FakeAnthropic;
  let h: Harness;
  afterEach(async () => {
    await h?.close();
    cleanup(h.dir);
    await fake.close();
    delete process.env.FAKE_ANTHROPIC_KEY;
  });

  test('a thinking, tool-using turn completes; usage counted; the key is never journaled', async () => {
    fake = await startFakeAnthropic();
    process.env.FAKE_ANTHROPIC_KEY = 'sk-ant-session-secret';
    h = await openHost({
      approval_policy: 'auto',
      models: { routes: { claude: { ...route, base_url: fake.baseURL, reasoning_efforts: ['low', 'high'] } } },
    });
    const d = await h.host.create({ cwd: h.dir });
    const s = (await h.host.open(d.session_id))!;
    const w = new Watcher(s);
    s.submit(op({ type: 'set_model', route: 'claude', reasoning_effort: 'high' }));
    writeFileSync(join(h.dir, 'notes.txt'), 'the secret word is teal');
    fake.enqueue(
      events([
        ev.start({ input_tokens: 100, cache_read_input_tokens: 0, cache_creation_input_tokens: 20, output_tokens: 1 }),
        ...ev.thinkingBlock(0, ['Read the notes.'], ['sig']),
        ...ev.toolBlock(1, 'toolu_1', 'read_file', '{"path":', '"notes.txt"}'),
        ev.delta('tool_use', { output_tokens: 10 }),
        ev.messageStop(),
      ]),
      events(textReply(['The word ', 'is teal.'])),
    );
    s.submit(msg('what is in notes.txt?'));
    const done = await w.next('turn_complete');
    expect(done).toMatchObject({ last_message: 'The word is teal.', model_calls: 2, tool_calls: 1, failed_tool_calls: 0 });
    expect(done.usage).toMatchObject({ input_tokens: 130, output_tokens: 15 });
    const [first, second] = fake.requests;
    expect(first!.body.thinking).toEqual({ type: 'enabled', budget_tokens: 16384 });
    expect(first!.headers.authorization).toBe('Bearer sk-ant-session-secret');
    expect(second!.body.messages.at(-1).content[0]).toMatchObject({ type: 'tool_result', tool_use_id: 'toolu_1', content: 'the secret word is teal' });
    const journal = (await h.host.readAfter(s.id, 0, 1000)).map((b) => b.frame).join('');
    expect(journal).not.toContain('sk-ant-session-secret');
  });
});
