/**
 * Real provider routes through the whole runtime: a session configured with an `openai`
 * route talks to a real local HTTP server speaking streaming Chat Completions (SSE).
 * Turn limits (idle timeout, retries, length continuation, doom loop, max steps) and
 * token usage are checked end to end.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, test } from 'vitest';
import { addUsage } from '../src/session/state.js';
import { chunk, sse, sseThenHang, startFakeOpenAI, status, type FakeOpenAI } from './helpers/fake-openai.js';
import { cleanup, msg, op, openHost, Watcher, type Harness } from './helpers/session.js';

let fake: FakeOpenAI;
let h: Harness;
beforeEach(async () => {
  fake = await startFakeOpenAI();
  process.env.FAKE_PROVIDER_KEY = 'sk-test-secret';
});
afterEach(async () => {
  await h?.close();
  cleanup(h.dir);
  await fake.close();
});

async function start(limits: object = {}) {
  h = await openHost({
    approval_policy: 'auto',
    models: {
      default: 'scripted',
      routes: { gpt: { provider: 'openai', model: 'fake-model', base_url: fake.baseURL, api_key_env: 'FAKE_PROVIDER_KEY', context_window: 8000 } },
    },
    limits,
  });
  const d = await h.host.create({ cwd: h.dir });
  const s = (await h.host.open(d.session_id))!;
  s.submit(op({ type: 'set_model', route: 'gpt' }));
  return { s, w: new Watcher(s), id: d.session_id };
}

const toolCall = (id: string, name: string, args: string) => [
  chunk.tool(0, { id, name, args: args.slice(0, 5) }),
  chunk.tool(0, { args: args.slice(5) }),
  chunk.finish('tool_calls'),
];

describe('openai route in a session', () => {
  test('a tool-using conversation: tool call split across chunks, result sent back, usage counted', async () => {
    const { s, w } = await start();
    writeFileSync(join(h.dir, 'notes.txt'), 'the secret word is teal');
    fake.enqueue(
      sse([chunk.role(), ...toolCall('call_a', 'read_file', '{"path":"notes.txt"}'), chunk.usage(100, 10)]),
      sse([chunk.text('The word '), chunk.text('is teal.'), chunk.finish('stop'), chunk.usage(150, 5)]),
    );
    s.submit(msg('what is in notes.txt?'));
    const done = await w.next('turn_complete');
    expect(done).toMatchObject({ last_message: 'The word is teal.', model_calls: 2, tool_calls: 1, failed_tool_calls: 0 });
    expect(done.usage).toEqual({ input_tokens: 250, output_tokens: 15 });
    expect(w.msgs('tool_call_end')[0]).toMatchObject({ status: 'ok', output: 'the secret word is teal' });
    expect(w.msgs('token_usage').at(-1)).toMatchObject({ total: { input_tokens: 250, output_tokens: 15 } });
    expect(s.state.usage_total).toEqual({ input_tokens: 250, output_tokens: 15 });
    const second = fake.requests[1]!;
    expect(second.headers.authorization).toBe('Bearer sk-test-secret');
    expect(second.body.model).toBe('fake-model');
    expect(second.body.messages).toContainEqual(expect.objectContaining({ role: 'tool', tool_call_id: 'call_a', content: 'the secret word is teal' }));
    expect(second.body.tools.map((t: { function: { name: string } }) => t.function.name).sort()).toEqual(['delegate', 'edit_file', 'glob', 'grep', 'list_dir', 'read_file', 'shell', 'write_file']);
    // The key is never journaled.
    const journal = (await h.host.readAfter(s.id, 0, 1000)).map((b) => b.frame).join('');
    expect(journal).not.toContain('sk-test-secret');
  });

  test('a stalled stream fails the turn after model_idle_timeout_ms; the session keeps working', async () => {
    const { s, w } = await start({ model_idle_timeout_ms: 300 });
    fake.enqueue(sseThenHang([chunk.role(), chunk.text('thinking')]), sse([chunk.text('back'), chunk.finish('stop')]));
    s.submit(msg('hello'));
    const failed = await w.next('turn_failed');
    expect(failed.error.code).toBe('model_idle_timeout');
    s.submit(msg('again'));
    expect((await w.next('turn_complete')).last_message).toBe('back');
  });

  test('HTTP 500 is retried, then the turn fails with a typed error', async () => {
    const { s, w } = await start();
    fake.enqueue(...Array.from({ length: 4 }, () => status(500, { error: { message: 'boom' } })));
    s.submit(msg('hello'));
    const failed = await w.next('turn_failed', 1, 20_000);
    expect(failed.error.code).toBe('provider_error');
    expect(fake.requests).toHaveLength(4);
    fake.enqueue(sse([chunk.text('ok now'), chunk.finish('stop')]));
    s.submit(msg('again'));
    expect((await w.next('turn_complete')).last_message).toBe('ok now');
  }, 30_000);

  test('a reply cut off by length is continued', async () => {
    const { s, w } = await start();
    fake.enqueue(sse([chunk.text('first half, '), chunk.finish('length')]), sse([chunk.text('second half.'), chunk.finish('stop')]));
    s.submit(msg('write a lot'));
    const done = await w.next('turn_complete');
    expect(done.model_calls).toBe(2);
    // One reply: one agent_message, last_message whole, ended normally.
    expect(w.msgs('agent_message').map((m) => (m as { text: string }).text)).toEqual(['first half, second half.']);
    expect(done).toMatchObject({ last_message: 'first half, second half.', stop_reason: 'end_turn' });
    const continued = fake.requests[1]!.body.messages;
    expect(continued.at(-2)).toMatchObject({ role: 'assistant', content: 'first half, ' });
    expect(continued.at(-1)).toMatchObject({ role: 'user' });
    expect(continued.at(-1).content).toMatch(/^\[runtime note\] .*cut off/);
    expect(continued.filter((m: { role: string }) => m.role === 'system')).toHaveLength(continued[0].role === 'system' ? 1 : 0);
    // The next call sees the reply once, whole, without the note.
    fake.enqueue(sse([chunk.text('ok'), chunk.finish('stop')]));
    s.submit(msg('thanks'));
    await w.next('turn_complete', 2);
    const next = fake.requests[2]!.body.messages.filter((m: { role: string }) => m.role !== 'system');
    expect(next).toEqual([
      { role: 'user', content: 'write a lot' },
      { role: 'assistant', content: 'first half, second half.' },
      { role: 'user', content: 'thanks' },
    ]);
  });

  test('a reply still cut off after the last continuation completes with stop_reason length', async () => {
    const { s, w } = await start();
    for (let i = 0; i < 4; i++) fake.enqueue(sse([chunk.text(`p${i} `), chunk.finish('length')]));
    s.submit(msg('write forever'));
    const done = await w.next('turn_complete');
    expect(done.stop_reason).toBe('length');
    expect(done.last_message).toBe('p0 p1 p2 p3 '.slice(0, 3 * (done.model_calls as number)));
    expect(w.msgs('agent_message')).toHaveLength(1);
  });

  test('the same tool call three times in a row fails with doom_loop_detected', async () => {
    const { s, w } = await start();
    for (let i = 0; i < 3; i++) fake.enqueue(sse(toolCall(`call_${i}`, 'list_dir', '{"path":"."}')));
    s.submit(msg('loop'));
    expect((await w.next('turn_failed')).error.code).toBe('doom_loop_detected');
  });

  test('max_model_steps fails the turn', async () => {
    const { s, w } = await start({ max_model_steps: 2 });
    fake.enqueue(sse(toolCall('c1', 'list_dir', '{"path":"."}')), sse(toolCall('c2', 'list_dir', '{"path":"./"}')));
    s.submit(msg('go'));
    expect((await w.next('turn_failed')).error.code).toBe('max_model_steps_exceeded');
    expect(fake.requests).toHaveLength(2);
  });
});

test('token counters saturate instead of overflowing', () => {
  const big = { input_tokens: Number.MAX_SAFE_INTEGER - 1, output_tokens: 5 };
  expect(addUsage(big, { input_tokens: 10, output_tokens: 1 })).toEqual({ input_tokens: Number.MAX_SAFE_INTEGER, output_tokens: 6 });
});

test('the idle timeout does not run during a retry back-off: a Retry-After longer than it does not fail the call', async () => {
  const { s, w } = await start({ model_idle_timeout_ms: 400 });
  fake.enqueue(
    status(429, { error: { message: 'slow down' } }, { 'retry-after': '1' }),
    sse([chunk.role(), chunk.text('after the wait'), chunk.finish('stop'), chunk.usage(10, 2)]),
  );
  s.submit(msg('hello'));
  const done = await w.next('turn_complete', 1, 10_000);
  expect(done.last_message).toBe('after the wait');
  expect(w.count('turn_failed')).toBe(0);
  expect(fake.requests).toHaveLength(2);
});
