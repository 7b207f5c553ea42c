import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createOpenAIClient } from '../src/model/openai.js';
import { ModelError, type ModelChunk, type ModelRequest, type ModelRoute } from '../src/model/types.js';
import { abortAfterFirst, collect, failure, timed } from './helpers/model-stream.js';
import { chunk, sse, sseThenDrop, sseThenHang, startFakeOpenAI, status, type FakeOpenAI } from './helpers/fake-openai.js';

const KEY_ENV = 'AGENTD_TEST_OPENAI_KEY';
const SECRET = 'sk-test-secret-123456';

let fake: FakeOpenAI;
beforeEach(async () => {
  fake = await startFakeOpenAI();
  process.env[KEY_ENV] = SECRET;
});
afterEach(async () => {
  delete process.env[KEY_ENV];
  await fake.close();
});

function route(extra: Partial<ModelRoute> = {}): ModelRoute {
  return { route: 'test', provider: 'openai', model: 'fake-model', base_url: fake.baseURL, api_key_env: KEY_ENV, context_window: null, ...extra };
}

function request(extra: Partial<ModelRequest> = {}): ModelRequest {
  return {
    route: route(),
    reasoning_effort: null,
    context: [{ role: 'user', text: 'hi' }],
    tools: [],
    signal: new AbortController().signal,
    ...extra,
  };
}

const fast = () => createOpenAIClient({ baseDelayMs: 1, maxDelayMs: 5 });

describe('openai provider: streaming', () => {
  it('streams text deltas, usage and finish', async () => {
    fake.enqueue(sse([chunk.role(), chunk.text('Hel'), chunk.text('lo'), chunk.finish('stop'), chunk.usage(12, 3)]));
    const out = await collect(fast().stream(request()));
    expect(out).toEqual([
      { type: 'text_delta', delta: 'Hel' },
      { type: 'text_delta', delta: 'lo' },
      { type: 'usage', input_tokens: 12, output_tokens: 3 },
      { type: 'finish', reason: 'stop' },
    ]);
  });

  it('assembles a tool call whose name and arguments are split across chunks', async () => {
    fake.enqueue(
      sse([
        chunk.tool(0, { id: 'call_1', name: 'read_', args: '' }),
        chunk.tool(0, { name: 'file', args: '{"pa' }),
        chunk.tool(0, { args: 'th": "a.t' }),
        chunk.tool(0, { args: 'xt"}' }),
        chunk.finish('tool_calls'),
      ]),
    );
    const out = await collect(fast().stream(request()));
    expect(out).toEqual([
      { type: 'tool_call', call: { call_id: 'call_1', tool: 'read_file', arguments: { path: 'a.txt' } } },
      { type: 'finish', reason: 'tool_calls' },
    ]);
  });

  it('assembles two parallel tool calls (interleaved fragments)', async () => {
    fake.enqueue(
      sse([
        chunk.text('Let me look.'),
        chunk.tool(0, { id: 'call_a', name: 'list_dir', args: '{"path":' }),
        chunk.tool(1, { id: 'call_b', name: 'shell', args: '{"comm' }),
        chunk.tool(0, { args: '"."}' }),
        chunk.tool(1, { args: 'and":"ls"}' }),
        chunk.finish('tool_calls'),
        chunk.usage(5, 7),
      ]),
    );
    const out = await collect(fast().stream(request()));
    expect(out).toEqual([
      { type: 'text_delta', delta: 'Let me look.' },
      { type: 'tool_call', call: { call_id: 'call_a', tool: 'list_dir', arguments: { path: '.' } } },
      { type: 'tool_call', call: { call_id: 'call_b', tool: 'shell', arguments: { command: 'ls' } } },
      { type: 'usage', input_tokens: 5, output_tokens: 7 },
      { type: 'finish', reason: 'tool_calls' },
    ]);
  });

  it('maps finish reasons length and function_call', async () => {
    fake.enqueue(sse([chunk.text('cut'), chunk.finish('length')]));
    expect((await collect(fast().stream(request()))).at(-1)).toEqual({ type: 'finish', reason: 'length' });
    fake.enqueue(sse([chunk.finish('function_call')]));
    expect((await collect(fast().stream(request()))).at(-1)).toEqual({ type: 'finish', reason: 'tool_calls' });
  });

  it('rejects a tool call with invalid JSON arguments, but drops it when the reply was cut by length', async () => {
    fake.enqueue(sse([chunk.tool(0, { id: 'c', name: 'shell', args: '{"command": "l' }), chunk.finish('tool_calls')]));
    const err = await failure(fast().stream(request()));
    expect(err.code).toBe('invalid_tool_arguments');

    fake.enqueue(sse([chunk.text('x'), chunk.tool(0, { id: 'c', name: 'shell', args: '{"command": "l' }), chunk.finish('length')]));
    const out = await collect(fast().stream(request()));
    expect(out).toEqual([
      { type: 'text_delta', delta: 'x' },
      { type: 'finish', reason: 'length' },
    ]);
  });

  it('sends the documented request body and the key from the env var', async () => {
    fake.enqueue(sse([chunk.text('ok'), chunk.finish('stop')]));
    await collect(
      fast().stream(
        request({
          reasoning_effort: 'high',
          context: [
            { role: 'system', text: 'the previous turn was interrupted' },
            { role: 'user', text: 'list files' },
            { role: 'assistant', text: '', tool_calls: [{ call_id: 'c1', tool: 'list_dir', arguments: { path: '.' } }] },
            { role: 'tool', call_id: 'c1', tool: 'list_dir', output: 'a.txt' },
            { role: 'assistant', text: 'one file' },
          ],
          tools: [{ name: 'list_dir', description: 'List a directory', parameters: { type: 'object', properties: { path: { type: 'string' } } } }],
        }),
      ),
    );
    const [req] = fake.requests;
    expect(req!.method).toBe('POST');
    expect(req!.url).toBe('/v1/chat/completions');
    expect(req!.headers['authorization']).toBe(`Bearer ${SECRET}`);
    expect(req!.body).toMatchObject({
      model: 'fake-model',
      stream: true,
      stream_options: { include_usage: true },
      reasoning_effort: 'high',
      tools: [{ type: 'function', function: { name: 'list_dir', description: 'List a directory', parameters: { type: 'object', properties: { path: { type: 'string' } } } } }],
      messages: [
        { role: 'user', content: '[runtime note] the previous turn was interrupted' },
        { role: 'user', content: 'list files' },
        { role: 'assistant', content: null, tool_calls: [{ id: 'c1', type: 'function', function: { name: 'list_dir', arguments: '{"path":"."}' } }] },
        { role: 'tool', tool_call_id: 'c1', content: 'a.txt' },
        { role: 'assistant', content: 'one file' },
      ],
    });
  });

  it('omits tools and reasoning_effort when not set, and sends a placeholder key without api_key_env', async () => {
    fake.enqueue(sse([chunk.text('ok'), chunk.finish('stop')]));
    const r = route();
    delete r.api_key_env;
    await collect(fast().stream(request({ route: r })));
    const body = fake.requests[0]!.body;
    expect(body.tools).toBeUndefined();
    expect(body.reasoning_effort).toBeUndefined();
    expect(fake.requests[0]!.headers['authorization']).toBe('Bearer not-needed');
  });
});

describe('openai provider: failures and retries', () => {
  it('retries HTTP 500 and then succeeds', async () => {
    fake.enqueue(status(500, { error: { message: 'boom' } }), status(503, { error: { message: 'busy' } }), sse([chunk.text('ok'), chunk.finish('stop')]));
    const out = await collect(fast().stream(request()));
    expect(out[0]).toEqual({ type: 'text_delta', delta: 'ok' });
    expect(fake.requests).toHaveLength(3);
  });

  it('gives up after maxRetries with ModelError provider_error', async () => {
    for (let i = 0; i < 5; i++) fake.enqueue(status(500, { error: { message: 'boom' } }));
    const err = await failure(createOpenAIClient({ maxRetries: 2, baseDelayMs: 1 }).stream(request()));
    expect(err.code).toBe('provider_error');
    expect(err.retryable).toBe(true);
    expect(fake.requests).toHaveLength(3);
  });

  it('honours Retry-After on 429', async () => {
    fake.enqueue(status(429, { error: { message: 'slow down' } }, { 'retry-after': '1' }), sse([chunk.text('ok'), chunk.finish('stop')]));
    const { out, ms } = await timed(fast().stream(request()));
    expect(ms).toBeGreaterThanOrEqual(900);
    expect(out[0]).toEqual({ type: 'text_delta', delta: 'ok' });
    expect(fake.requests).toHaveLength(2);
  });

  it('reports rate_limited when 429 persists', async () => {
    for (let i = 0; i < 3; i++) fake.enqueue(status(429, { error: { message: 'slow down' } }));
    const err = await failure(createOpenAIClient({ maxRetries: 1, baseDelayMs: 1 }).stream(request()));
    expect(err.code).toBe('rate_limited');
    expect(fake.requests).toHaveLength(2);
  });

  it('does not retry 4xx; 401 is unauthorized and never shows the key', async () => {
    fake.enqueue(status(401, { error: { message: `Incorrect API key provided: ${SECRET}`, code: 'invalid_api_key' } }));
    const err = await failure(fast().stream(request()));
    expect(err.code).toBe('unauthorized');
    expect(err.retryable).toBe(false);
    expect(err.message).not.toContain(SECRET);
    expect(fake.requests).toHaveLength(1);

    fake.enqueue(status(400, { error: { message: 'bad model' } }));
    expect((await failure(fast().stream(request()))).code).toBe('bad_request');
    expect(fake.requests).toHaveLength(2);
  });

  it('retries connection errors and then reports provider_unavailable', async () => {
    const url = fake.baseURL;
    await fake.close();
    let calls = 0;
    const counting: typeof fetch = (input, init) => {
      calls++;
      return fetch(input, init);
    };
    const client = createOpenAIClient({ maxRetries: 2, baseDelayMs: 1, fetch: counting });
    const err = await failure(client.stream(request({ route: route({ base_url: url }) })));
    expect(err.code).toBe('provider_unavailable');
    expect(err.retryable).toBe(true);
    expect(calls).toBe(3);
    fake = await startFakeOpenAI(); // for afterEach
  });

  it('does not retry once output has started', async () => {
    fake.enqueue(sseThenDrop([chunk.text('partial')]), sse([chunk.text('again'), chunk.finish('stop')]));
    const seen: ModelChunk[] = [];
    let caught: unknown;
    try {
      for await (const c of fast().stream(request())) seen.push(c);
    } catch (err) {
      caught = err;
    }
    expect(seen).toEqual([{ type: 'text_delta', delta: 'partial' }]);
    expect(caught).toBeInstanceOf(ModelError);
    expect((caught as ModelError).code).toBe('provider_unavailable');
    expect((caught as ModelError).retryable).toBe(false);
    expect(fake.requests).toHaveLength(1);
  });

  it('reports an error object inside the stream and a stream without finish reason', async () => {
    fake.enqueue(sse([chunk.text('a'), { error: { message: 'overloaded' } }]));
    expect((await failure(fast().stream(request()))).code).toBe('provider_error');
    fake.enqueue(sse([chunk.text('a')]));
    expect((await failure(fast().stream(request()))).code).toBe('incomplete_stream');
  });

  it('aborts mid-stream promptly with ModelError aborted', async () => {
    fake.enqueue(sseThenHang([chunk.text('first')]));
    const ac = new AbortController();
    const { first, err, ms } = await abortAfterFirst(fast().stream(request({ signal: ac.signal })), ac);
    expect(first).toEqual({ type: 'text_delta', delta: 'first' });
    expect(ms).toBeLessThan(1000);
    expect(err).toBeInstanceOf(ModelError);
    expect((err as ModelError).code).toBe('aborted');
  });

  it('aborts a backoff wait promptly', async () => {
    fake.enqueue(status(429, { error: { message: 'slow down' } }, { 'retry-after': '30' }));
    const ac = new AbortController();
    setTimeout(() => ac.abort(), 50);
    const started = Date.now();
    const err = await failure(fast().stream(request({ signal: ac.signal })));
    expect(err.code).toBe('aborted');
    expect(Date.now() - started).toBeLessThan(1000);
  });
});

describe('openai provider: reasoning, cached usage, system prompt, overflow', () => {
  it('yields reasoning_content (and reasoning) deltas as reasoning_delta, before the text', async () => {
    const reasoning = (field: string, text: string) => ({ ...chunk.text(''), choices: [{ index: 0, delta: { [field]: text }, finish_reason: null }] });
    fake.enqueue(sse([reasoning('reasoning_content', 'Let me '), reasoning('reasoning', 'think.'), chunk.text('Answer'), chunk.finish('stop')]));
    const out = await collect(fast().stream(request()));
    expect(out).toEqual([
      { type: 'reasoning_delta', delta: 'Let me ' },
      { type: 'reasoning_delta', delta: 'think.' },
      { type: 'text_delta', delta: 'Answer' },
      { type: 'finish', reason: 'stop' },
    ]);
  });

  it('reports cached prompt tokens and reasoning tokens on the usage chunk', async () => {
    const usage = {
      ...chunk.usage(100, 40),
      usage: { prompt_tokens: 100, completion_tokens: 40, total_tokens: 140, prompt_tokens_details: { cached_tokens: 64 }, completion_tokens_details: { reasoning_tokens: 25 } },
    };
    fake.enqueue(sse([chunk.text('ok'), chunk.finish('stop'), usage]));
    const out = await collect(fast().stream(request()));
    expect(out).toContainEqual({ type: 'usage', input_tokens: 100, output_tokens: 40, cached_input_tokens: 64, reasoning_tokens: 25 });
  });

  it('sends the system prompt as the one system message, first; runtime notes as marked user messages', async () => {
    fake.enqueue(sse([chunk.text('ok'), chunk.finish('stop')]));
    await collect(fast().stream(request({ system: 'You are agentd.', context: [{ role: 'system', text: 'note' }, { role: 'user', text: 'hi' }] })));
    expect(fake.requests[0]!.body.messages).toEqual([
      { role: 'system', content: 'You are agentd.' },
      { role: 'user', content: '[runtime note] note' },
      { role: 'user', content: 'hi' },
    ]);
  });


  it('maps context_length_exceeded and HTTP 413 to context_overflow, without retrying', async () => {
    fake.enqueue(status(400, { error: { message: "This model's maximum context length is 8192 tokens", code: 'context_length_exceeded' } }));
    const err = await failure(fast().stream(request()));
    expect(err.code).toBe('context_overflow');
    expect(err.retryable).toBe(false);
    fake.enqueue(status(413, { error: { message: 'request too large' } }));
    expect((await failure(fast().stream(request()))).code).toBe('context_overflow');
    expect(fake.requests).toHaveLength(2);
  });
});

/** A whole Chat Completions answer (non-streaming). */
function completion(message: object, finish: string, usage?: { prompt_tokens: number; completion_tokens: number }) {
  return { id: 'chatcmpl-x', object: 'chat.completion', created: 0, model: 'fake', choices: [{ index: 0, message: { role: 'assistant', ...message }, finish_reason: finish, logprobs: null }], ...(usage && { usage: { ...usage, total_tokens: usage.prompt_tokens + usage.completion_tokens } }) };
}

describe('openai provider: non-streaming answers', () => {
  it('a route with stream: false sends a non-streaming request and reads its one JSON body', async () => {
    fake.enqueue(status(200, completion({ content: 'whole reply' }, 'stop', { prompt_tokens: 9, completion_tokens: 2 })));
    const out = await collect(fast().stream(request({ route: route({ stream: false }) })));
    expect(fake.requests[0]!.body.stream).toBe(false);
    expect(fake.requests[0]!.body.stream_options).toBeUndefined();
    expect(out).toEqual([
      { type: 'text_delta', delta: 'whole reply' },
      { type: 'usage', input_tokens: 9, output_tokens: 2 },
      { type: 'finish', reason: 'stop' },
    ]);
  });

  it('a server answering a streaming request with one JSON body is understood, tool calls and reasoning included', async () => {
    fake.enqueue(
      status(
        200,
        completion(
          { content: null, reasoning_content: 'think', tool_calls: [{ id: 'c1', type: 'function', function: { name: 'read_file', arguments: '{"path":"a"}' } }] },
          'tool_calls',
        ),
      ),
    );
    const out = await collect(fast().stream(request()));
    expect(fake.requests[0]!.body.stream).toBe(true);
    expect(out).toEqual([
      { type: 'reasoning_delta', delta: 'think' },
      { type: 'tool_call', call: { call_id: 'c1', tool: 'read_file', arguments: { path: 'a' } } },
      { type: 'finish', reason: 'tool_calls' },
    ]);
  });

  it('a JSON body cut off by length keeps its finish reason; an error object in a 200 body is a provider error', async () => {
    fake.enqueue(status(200, completion({ content: 'cut' }, 'length')));
    expect(await collect(fast().stream(request({ route: route({ stream: false }) })))).toEqual([
      { type: 'text_delta', delta: 'cut' },
      { type: 'finish', reason: 'length' },
    ]);
    fake.enqueue(status(200, { error: { message: 'backend exploded' } }), status(200, { error: { message: 'backend exploded' } }), status(200, { error: { message: 'backend exploded' } }), status(200, { error: { message: 'backend exploded' } }));
    const err = await failure(fast().stream(request({ route: route({ stream: false }) })));
    expect(err.code).toBe('provider_error');
    expect(err.message).toContain('backend exploded');
  });
});
