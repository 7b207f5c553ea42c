/**
 * The anthropic provider against a real local HTTP server speaking Anthropic's Messages
 * SSE stream, parsed by the official SDK: streaming, tools, thinking, caching, usage,
 * retries, typed failures and the API key's handling.
 */
import { afterEach, describe, expect, it, vi } from 'vitest';
import { createAnthropicClient } from '../src/model/anthropic.js';
import { ModelError, type ContextItem, type ModelChunk, type ReasoningBlock, type ToolCallRequest } from '../src/model/types.js';
import { ev, events, eventsThenDrop, eventsThenHang, startFakeAnthropic, status, textReply } from './helpers/fake-anthropic.js';
import { abortAfterFirst, collect, failure, timed } from './helpers/model-stream.js';
import { useFakeProvider } from './helpers/provider-fixture.js';

const KEY_ENV = 'AGENTD_TEST_ANTHROPIC_KEY';
const SECRET = 'sk-ant-test-secret-987654';

const f = useFakeProvider(startFakeAnthropic, { route: 'claude', provider: 'anthropic', model: 'fake-claude', context_window: 200_000 }, KEY_ENV, SECRET);
const { route, request } = f;

const fast = () => createAnthropicClient({ baseDelayMs: 1, maxDelayMs: 5 });
const anthropicError = (type: string, message: string) => ({ type: 'error', error: { type, message } });

const SHELL = { name: 'shell', description: 'Run a command', parameters: { type: 'object', properties: { command: { type: 'string' } } } };

/** The assistant item a session would keep for these chunks. */
function assistantItem(chunks: ModelChunk[]): ContextItem {
  const text = chunks.flatMap((c) => (c.type === 'text_delta' ? [c.delta] : [])).join('');
  const tool_calls: ToolCallRequest[] = chunks.flatMap((c) => (c.type === 'tool_call' ? [c.call] : []));
  const reasoning: ReasoningBlock[] = chunks.flatMap((c) => (c.type === 'reasoning_block' ? [c.block] : []));
  return { role: 'assistant', text, tool_calls, reasoning };
}

/** Every cache_control found anywhere in a request body, with where it was. */
function cacheMarks(body: any): string[] {
  const marks: string[] = [];
  (body.system ?? []).forEach((b: any, i: number) => b.cache_control && marks.push(`system[${i}]`));
  body.messages.forEach((m: any, i: number) =>
    (m.content as any[]).forEach((b, j) => b.cache_control && marks.push(`messages[${i}].${b.type}[${j}]`)),
  );
  return marks;
}

describe('anthropic provider: streaming', () => {
  it('streams text deltas (pings ignored), usage and finish; sends the documented request', async () => {
    f.fake.enqueue(events([ev.start({ input_tokens: 12, output_tokens: 1 }), ev.ping(), ev.textStart(0), ev.text(0, 'Hel'), ev.ping(), ev.text(0, 'lo'), ev.stop(0), ev.delta('end_turn', { output_tokens: 3 }), ev.messageStop()]));
    const out = await collect(fast().stream(request()));
    expect(out).toEqual([
      { type: 'text_delta', delta: 'Hel' },
      { type: 'text_delta', delta: 'lo' },
      { type: 'usage', input_tokens: 12, output_tokens: 3, cached_input_tokens: 0 },
      { type: 'finish', reason: 'stop' },
    ]);
    const [req] = f.fake.requests;
    expect(req!.method).toBe('POST');
    expect(req!.url).toBe('/v1/messages');
    // SDK 1.14 sends an apiKey as a bearer token.
    expect(req!.headers['authorization']).toBe(`Bearer ${SECRET}`);
    expect(req!.headers['anthropic-version']).toBeTruthy();
    expect(req!.body).toEqual({ model: 'fake-claude', max_tokens: 8192, stream: true, messages: [{ role: 'user', content: [{ type: 'text', text: 'hi', cache_control: { type: 'ephemeral' } }] }] });
  });

  it('assembles parallel tool calls from input_json_delta fragments', async () => {
    f.fake.enqueue(
      events([
        ev.start(),
        ...ev.textBlock(0, 'Let me look.'),
        ...ev.toolBlock(1, 'toolu_a', 'list_dir', '', '{"pa', 'th": "."}'),
        ...ev.toolBlock(2, 'toolu_b', 'shell', '{"command"', ': "ls -la"}'),
        ...ev.toolBlock(3, 'toolu_c', 'status'),
        ev.delta('tool_use', { output_tokens: 30 }),
        ev.messageStop(),
      ]),
    );
    const out = await collect(fast().stream(request({ tools: [SHELL] })));
    expect(out.filter((c) => c.type !== 'usage')).toEqual([
      { type: 'text_delta', delta: 'Let me look.' },
      { type: 'tool_call', call: { call_id: 'toolu_a', tool: 'list_dir', arguments: { path: '.' } } },
      { type: 'tool_call', call: { call_id: 'toolu_b', tool: 'shell', arguments: { command: 'ls -la' } } },
      { type: 'tool_call', call: { call_id: 'toolu_c', tool: 'status', arguments: {} } },
      { type: 'finish', reason: 'tool_calls' },
    ]);
    expect(f.fake.requests[0]!.body.tools).toEqual([{ name: 'shell', description: 'Run a command', input_schema: SHELL.parameters }]);
  });

  it('rejects tool arguments that are not a JSON object', async () => {
    f.fake.enqueue(events([ev.start(), ev.toolStart(0, 'toolu_x', 'shell'), ev.json(0, '{"command": "l'), ev.stop(0), ev.delta('tool_use'), ev.messageStop()]));
    expect((await failure(fast().stream(request()))).code).toBe('invalid_tool_arguments');
  });

  it('maps max_tokens to finish length and drops the tool call it cut', async () => {
    f.fake.enqueue(events([ev.start(), ev.textStart(0), ev.text(0, 'cut'), ev.stop(0), ev.toolStart(1, 'toolu_y', 'shell'), ev.json(1, '{"comm'), ev.delta('max_tokens'), ev.messageStop()]));
    const out = await collect(fast().stream(request()));
    expect(out.filter((c) => c.type !== 'usage')).toEqual([
      { type: 'text_delta', delta: 'cut' },
      { type: 'finish', reason: 'length' },
    ]);
  });

  it('maps usage: input counts cache reads and writes, cached_input_tokens = cache reads, reasoning_tokens = thinking tokens', async () => {
    f.fake.enqueue(
      events([
        ev.start({ input_tokens: 100, cache_read_input_tokens: 800, cache_creation_input_tokens: 50, output_tokens: 1 }),
        ...ev.textBlock(0, 'ok'),
        ev.delta('end_turn', { output_tokens: 42, output_tokens_details: { thinking_tokens: 30 } }),
        ev.messageStop(),
      ]),
    );
    const out = await collect(fast().stream(request()));
    expect(out).toContainEqual({ type: 'usage', input_tokens: 950, output_tokens: 42, cached_input_tokens: 800, reasoning_tokens: 30 });
  });

  it('fails with incomplete_stream when the stream ends without a stop reason', async () => {
    f.fake.enqueue(events([ev.start(), ev.textStart(0), ev.text(0, 'a')]));
    expect((await failure(fast().stream(request()))).code).toBe('incomplete_stream');
  });
});

describe('anthropic provider: extended thinking', () => {
  it('streams thinking as reasoning_delta, keeps the signed block and sends it back in the tool loop', async () => {
    f.fake.enqueue(
      events([
        ev.start(),
        ...ev.thinkingBlock(0, ['I should ', 'list files.'], ['sig-part-1', '-part-2']),
        ...ev.toolBlock(1, 'toolu_1', 'shell', '{"command":"ls"}'),
        ev.delta('tool_use'),
        ev.messageStop(),
      ]),
    );
    const first = await collect(fast().stream(request({ reasoning_effort: 'high', tools: [SHELL] })));
    expect(first.slice(0, 3)).toEqual([
      { type: 'reasoning_delta', delta: 'I should ' },
      { type: 'reasoning_delta', delta: 'list files.' },
      { type: 'reasoning_block', block: { type: 'thinking', thinking: 'I should list files.', signature: 'sig-part-1-part-2' } },
    ]);
    expect(f.fake.requests[0]!.body.thinking).toEqual({ type: 'enabled', budget_tokens: 16384 });
    expect(f.fake.requests[0]!.body.max_tokens).toBe(8192 + 16384);

    f.fake.enqueue(events(textReply(['one file'])));
    const context: ContextItem[] = [
      { role: 'user', text: 'list files' },
      assistantItem(first),
      { role: 'tool', call_id: 'toolu_1', tool: 'shell', output: 'a.txt', exit_code: 0 },
    ];
    await collect(fast().stream(request({ reasoning_effort: 'high', tools: [SHELL], context })));
    const body = f.fake.requests[1]!.body;
    expect(body.thinking).toEqual({ type: 'enabled', budget_tokens: 16384 });
    expect(body.messages).toEqual([
      { role: 'user', content: [{ type: 'text', text: 'list files', cache_control: { type: 'ephemeral' } }] },
      {
        role: 'assistant',
        content: [
          { type: 'thinking', thinking: 'I should list files.', signature: 'sig-part-1-part-2' },
          { type: 'tool_use', id: 'toolu_1', name: 'shell', input: { command: 'ls' } },
        ],
      },
      { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_1', content: 'a.txt', cache_control: { type: 'ephemeral' } }] },
    ]);
  });

  it('keeps redacted thinking opaque and sends it back unchanged', async () => {
    f.fake.enqueue(
      events([ev.start(), ev.redacted(0, 'ENCRYPTED=='), ev.stop(0), ...ev.toolBlock(1, 'toolu_2', 'shell', '{"command":"pwd"}'), ev.delta('tool_use'), ev.messageStop()]),
    );
    const first = await collect(fast().stream(request({ reasoning_effort: 'low' })));
    expect(first[0]).toEqual({ type: 'reasoning_block', block: { type: 'redacted_thinking', data: 'ENCRYPTED==' } });
    expect(first.some((c) => c.type === 'reasoning_delta')).toBe(false);

    f.fake.enqueue(events(textReply(['/tmp'])));
    const context: ContextItem[] = [{ role: 'user', text: 'where?' }, assistantItem(first), { role: 'tool', call_id: 'toolu_2', tool: 'shell', output: '/tmp' }];
    await collect(fast().stream(request({ reasoning_effort: 'low', context })));
    const body = f.fake.requests[1]!.body;
    expect(body.thinking).toEqual({ type: 'enabled', budget_tokens: 2048 });
    expect(body.messages[1].content[0]).toEqual({ type: 'redacted_thinking', data: 'ENCRYPTED==' });
  });

  it('maps efforts to budgets (names and token counts), omits thinking without effort, rejects an unknown effort without a request', async () => {
    for (const [effort, budget] of [['minimal', 1024], ['medium', 8192], ['12000', 12000]] as const) {
      f.fake.enqueue(events(textReply(['ok'])));
      await collect(fast().stream(request({ reasoning_effort: effort })));
      expect(f.fake.requests.at(-1)!.body.thinking).toEqual({ type: 'enabled', budget_tokens: budget });
      expect(f.fake.requests.at(-1)!.body.max_tokens).toBe(8192 + budget);
    }
    f.fake.enqueue(events(textReply(['ok'])), events(textReply(['ok'])));
    await collect(fast().stream(request({ reasoning_effort: 'none', route: route({ max_tokens: 1000 }) })));
    await collect(fast().stream(request()));
    for (const req of f.fake.requests.slice(-2)) expect(req.body.thinking).toBeUndefined();
    expect(f.fake.requests.at(-2)!.body.max_tokens).toBe(1000);

    const count = f.fake.requests.length;
    const err = await failure(fast().stream(request({ reasoning_effort: 'extreme' })));
    expect(err.code).toBe('bad_request');
    expect(err.message).toContain('extreme');
    expect(f.fake.requests).toHaveLength(count);
  });

  it('drops thinking blocks when thinking is off, and makes an open tool loop without thinking blocks a call without thinking', async () => {
    const reasoning: ReasoningBlock[] = [{ type: 'thinking', thinking: 'hmm', signature: 's' }];
    const loop: ContextItem[] = [
      { role: 'user', text: 'go' },
      { role: 'assistant', text: '', tool_calls: [{ call_id: 't1', tool: 'shell', arguments: { command: 'ls' } }], reasoning },
      { role: 'tool', call_id: 't1', tool: 'shell', output: 'x' },
    ];
    f.fake.enqueue(events(textReply(['ok'])), events(textReply(['ok'])));
    await collect(fast().stream(request({ context: loop })));
    expect(f.fake.requests[0]!.body.messages[1].content).toEqual([{ type: 'tool_use', id: 't1', name: 'shell', input: { command: 'ls' } }]);

    const withoutThinking = loop.map((item) => (item.role === 'assistant' ? { ...item, reasoning: [] } : item));
    await collect(fast().stream(request({ context: withoutThinking, reasoning_effort: 'high' })));
    expect(f.fake.requests[1]!.body.thinking).toBeUndefined();
    expect(f.fake.requests[1]!.body.max_tokens).toBe(8192);
  });
});

describe('anthropic provider: transcript and prompt caching', () => {
  it('marks the system prompt and the stable prefix (the previous call end and the last message) for caching', async () => {
    f.fake.enqueue(events(textReply(['done'])));
    const context: ContextItem[] = [
      { role: 'user', text: 'first' },
      { role: 'assistant', text: 'answer one' },
      { role: 'system', text: 'the previous turn was interrupted' },
      { role: 'user', text: 'list files' },
      { role: 'assistant', text: 'Looking.', tool_calls: [{ call_id: 'a', tool: 'shell', arguments: { command: 'ls' } }, { call_id: 'b', tool: 'shell', arguments: { command: 'pwd' } }] },
      { role: 'tool', call_id: 'a', tool: 'shell', output: 'a.txt' },
      { role: 'tool', call_id: 'b', tool: 'shell', output: '' },
    ];
    // An id from another provider, outside the API's [A-Za-z0-9_-].
    (context[4] as { tool_calls: ToolCallRequest[] }).tool_calls[1]!.call_id = 'functions.shell:1';
    (context[6] as { call_id: string }).call_id = 'functions.shell:1';
    await collect(fast().stream(request({ system: 'You are agentd.', context, tools: [SHELL] })));
    const body = f.fake.requests[0]!.body;
    expect(body.system).toEqual([{ type: 'text', text: 'You are agentd.', cache_control: { type: 'ephemeral' } }]);
    expect(body.messages.map((m: any) => m.role)).toEqual(['user', 'assistant', 'user', 'assistant', 'user']);
    expect(body.messages[2].content).toEqual([
      { type: 'text', text: '[runtime note] the previous turn was interrupted' },
      { type: 'text', text: 'list files', cache_control: { type: 'ephemeral' } },
    ]);
    expect(body.messages[4].content).toEqual([
      { type: 'tool_result', tool_use_id: 'a', content: 'a.txt' },
      { type: 'tool_result', tool_use_id: 'functions_shell_1', cache_control: { type: 'ephemeral' } },
    ]);
    expect(body.messages[3].content[2]).toEqual({ type: 'tool_use', id: 'functions_shell_1', name: 'shell', input: { command: 'pwd' } });
    expect(cacheMarks(body)).toEqual(['system[0]', 'messages[2].text[1]', 'messages[4].tool_result[1]']);
    expect(body.tools.every((t: any) => t.cache_control === undefined)).toBe(true);
  });
});

describe('anthropic provider: failures and retries', () => {
  it('honours retry-after on 429, then succeeds', async () => {
    f.fake.enqueue(status(429, anthropicError('rate_limit_error', 'slow down'), { 'retry-after': '1' }), events(textReply(['ok'])));
    const { out, ms } = await timed(fast().stream(request()));
    expect(ms).toBeGreaterThanOrEqual(900);
    expect(out[0]).toEqual({ type: 'text_delta', delta: 'ok' });
    expect(f.fake.requests).toHaveLength(2);
  });

  it('gives up on persistent 500/529 with a retryable provider_error', async () => {
    f.fake.enqueue(status(529, anthropicError('overloaded_error', 'Overloaded')));
    for (let i = 0; i < 4; i++) f.fake.enqueue(status(500, anthropicError('api_error', 'boom')));
    const err = await failure(createAnthropicClient({ maxRetries: 2, baseDelayMs: 1 }).stream(request()));
    expect(err.code).toBe('provider_error');
    expect(err.retryable).toBe(true);
    expect(f.fake.requests).toHaveLength(3);
  });

  it('maps "prompt is too long" and HTTP 413 to context_overflow, not retried', async () => {
    f.fake.enqueue(status(400, anthropicError('invalid_request_error', 'prompt is too long: 210000 tokens > 200000 maximum')));
    const err = await failure(fast().stream(request()));
    expect(err.code).toBe('context_overflow');
    expect(err.retryable).toBe(false);
    expect(err.message).toContain('prompt is too long');
    f.fake.enqueue(status(413, anthropicError('request_too_large', 'Request exceeds the maximum allowed number of bytes.')));
    expect((await failure(fast().stream(request()))).code).toBe('context_overflow');
    f.fake.enqueue(status(400, anthropicError('invalid_request_error', 'max_tokens: must be positive')));
    expect((await failure(fast().stream(request()))).code).toBe('bad_request');
    expect(f.fake.requests).toHaveLength(3);
  });

  it('retries an error event before any output, but not after output started', async () => {
    f.fake.enqueue(events([ev.start(), ev.error('overloaded_error', 'Overloaded')]), events(textReply(['ok'])));
    expect((await collect(fast().stream(request())))[0]).toEqual({ type: 'text_delta', delta: 'ok' });
    expect(f.fake.requests).toHaveLength(2);

    f.fake.enqueue(events([ev.start(), ev.textStart(0), ev.text(0, 'partial'), ev.error('overloaded_error', 'Overloaded')]), events(textReply(['again'])));
    const seen: ModelChunk[] = [];
    const err = await failure(
      (async function* () {
        for await (const c of fast().stream(request())) yield (seen.push(c), c);
      })(),
    );
    expect(seen).toEqual([{ type: 'text_delta', delta: 'partial' }]);
    expect(err.code).toBe('provider_error');
    expect(err.retryable).toBe(false);
    expect(f.fake.requests).toHaveLength(3);
  });

  it('a dropped connection is retried before any output; after output it fails provider_unavailable, not retryable', async () => {
    f.fake.enqueue(eventsThenDrop([ev.start(), ev.ping()]), events(textReply(['ok'])));
    expect((await collect(fast().stream(request())))[0]).toEqual({ type: 'text_delta', delta: 'ok' });
    expect(f.fake.requests).toHaveLength(2);

    f.fake.enqueue(eventsThenDrop([ev.start(), ...ev.textBlock(0, 'partial')]), events(textReply(['again'])));
    const err = await failure(fast().stream(request()));
    expect(err.code).toBe('provider_unavailable');
    expect(err.retryable).toBe(false);
    expect(f.fake.requests).toHaveLength(3);
  });

  it('aborts mid-stream promptly with ModelError aborted', async () => {
    f.fake.enqueue(eventsThenHang([ev.start(), ev.thinkingStart(0), ev.thinking(0, 'first')]));
    const ac = new AbortController();
    const { first, err, ms } = await abortAfterFirst(fast().stream(request({ signal: ac.signal, reasoning_effort: 'low' })), ac);
    expect(first).toEqual({ type: 'reasoning_delta', delta: 'first' });
    expect(ms).toBeLessThan(1000);
    expect(err).toBeInstanceOf(ModelError);
    expect((err as ModelError).code).toBe('aborted');
  });
});

describe('anthropic provider: the API key', () => {
  const saved = { key: process.env.ANTHROPIC_API_KEY, token: process.env.ANTHROPIC_AUTH_TOKEN };
  afterEach(() => {
    for (const [name, value] of [['ANTHROPIC_API_KEY', saved.key], ['ANTHROPIC_AUTH_TOKEN', saved.token]] as const) {
      if (value === undefined) delete process.env[name];
      else process.env[name] = value;
    }
  });

  it('is taken only from api_key_env (never ANTHROPIC_API_KEY / ANTHROPIC_AUTH_TOKEN), and never logged or shown in errors', async () => {
    process.env.ANTHROPIC_API_KEY = 'sk-ant-ambient-key';
    process.env.ANTHROPIC_AUTH_TOKEN = 'ambient-token';
    const logged: string[] = [];
    const spies = (['log', 'info', 'warn', 'error', 'debug'] as const).map((m) =>
      vi.spyOn(console, m).mockImplementation((...args: unknown[]) => void logged.push(args.map(String).join(' '))),
    );
    try {
      f.fake.enqueue(events(textReply(['ok'])), status(401, anthropicError('authentication_error', `invalid x-api-key ${SECRET}`)));
      await collect(fast().stream(request()));
      expect(f.fake.requests[0]!.headers['authorization']).toBe(`Bearer ${SECRET}`);
      expect(f.fake.requests[0]!.headers['x-api-key']).toBeUndefined();

      const err = await failure(fast().stream(request()));
      expect(err.code).toBe('unauthorized');
      expect(err.retryable).toBe(false);
      expect(err.message).not.toContain(SECRET);
      expect(err.message).toContain('[redacted]');
      expect(f.fake.requests).toHaveLength(2);
    } finally {
      for (const s of spies) s.mockRestore();
    }
    expect(logged.join('\n')).not.toContain(SECRET);
  });

  it('sends the placeholder when the variable is unset, and the error names the variable', async () => {
    process.env.ANTHROPIC_API_KEY = 'sk-ant-ambient-key';
    delete process.env[KEY_ENV];
    f.fake.enqueue(status(401, anthropicError('authentication_error', 'invalid x-api-key')));
    const err = await failure(fast().stream(request()));
    expect(f.fake.requests[0]!.headers['authorization']).toBe('Bearer not-needed');
    expect(err.code).toBe('unauthorized');
    expect(err.message).toContain(KEY_ENV);
  });
});
