/**
 * The OpenAI-compatible provider through a real daemon and socket, against a real local
 * HTTP server: a `stream: false` route, a server answering a streaming request with one
 * JSON body, the one system message, and a reply continued after a length stop arriving as
 * one reply (docs/models.md).
 */
import { describe, expect, test } from 'vitest';
import { chunk, sse, status } from './helpers/fake-openai.js';
import { daemonPool } from './helpers/pool.js';

const pool = daemonPool();

function completion(content: string, finish: string) {
  return {
    id: 'chatcmpl-1',
    object: 'chat.completion',
    created: 0,
    model: 'm',
    choices: [{ index: 0, message: { role: 'assistant', content }, finish_reason: finish, logprobs: null }],
    usage: { prompt_tokens: 10, completion_tokens: 3, total_tokens: 13 },
  };
}

async function bootWith(route: object) {
  const fake = await pool.fakeOpenAI();
  const { c, dir } = await pool.boot({ approval_policy: 'auto', models: { default: 'r', routes: { r: { provider: 'openai', model: 'm', base_url: fake.baseURL, ...route } } } });
  const s = (await c.createSession({ cwd: dir })).session_id as string;
  await c.attach(s);
  return { fake, c, s };
}

describe('openai routes through the daemon', () => {
  test('stream: false sends non-streaming requests and the reply arrives whole', async () => {
    const { fake, c, s } = await bootWith({ stream: false });
    fake.enqueue(status(200, completion('a whole answer', 'stop')));
    const id = await c.submitMessage(s, 'hi');
    expect(await c.waitTurnEnd(s, id)).toMatchObject({ type: 'turn_complete', last_message: 'a whole answer', stop_reason: 'end_turn' });
    expect(fake.requests[0]!.body.stream).toBe(false);
  });

  test('a JSON body to a streaming request is understood; the one system message comes first', async () => {
    const { fake, c, s } = await bootWith({});
    fake.enqueue(status(200, completion('json instead of events', 'stop')));
    const id = await c.submitMessage(s, 'hi');
    expect(await c.waitTurnEnd(s, id)).toMatchObject({ type: 'turn_complete', last_message: 'json instead of events' });
    const messages = fake.requests[0]!.body.messages as Array<{ role: string }>;
    expect(fake.requests[0]!.body.stream).toBe(true);
    expect(messages[0]!.role).toBe('system');
    expect(messages.filter((m) => m.role === 'system')).toHaveLength(1);
  });

  test('after a failed turn, its note reaches the next call as a marked user message, never a second system message', async () => {
    const { fake, c, s } = await bootWith({});
    fake.enqueue(status(500, { error: { message: 'down' } }), status(500, { error: { message: 'down' } }), status(500, { error: { message: 'down' } }), status(500, { error: { message: 'down' } }), status(500, { error: { message: 'down' } }));
    const first = await c.submitMessage(s, 'one');
    expect((await c.waitTurnEnd(s, first, 60_000)).type).toBe('turn_failed');
    fake.requests.length = 0;
    fake.enqueue(sse([chunk.text('fine'), chunk.finish('stop')]));
    const second = await c.submitMessage(s, 'two');
    await c.waitTurnEnd(s, second);
    const messages = fake.requests.at(-1)!.body.messages as Array<{ role: string; content: string }>;
    expect(messages.filter((m) => m.role === 'system')).toHaveLength(1);
    expect(messages.some((m) => m.role === 'user' && /^\[runtime note\] The previous turn failed/.test(m.content))).toBe(true);
  }, 90_000);

  test('a length stop is continued into one reply: one agent_message, whole last_message', async () => {
    const { fake, c, s } = await bootWith({});
    fake.enqueue(sse([chunk.text('The first half, '), chunk.finish('length')]), sse([chunk.text('and the second.'), chunk.finish('stop')]));
    const id = await c.submitMessage(s, 'write');
    expect(await c.waitTurnEnd(s, id)).toMatchObject({ type: 'turn_complete', last_message: 'The first half, and the second.', stop_reason: 'end_turn' });
    expect(c.events(s).filter((m) => m.type === 'agent_message').map((m) => m.text)).toEqual(['The first half, and the second.']);
  });
});
