/**
 * Units of src/telemetry: the model-call wrapper (outcomes, tokens by kind, a reader that
 * stops early), the tool label bound, when traces are wanted, and the spans with
 * `telemetry.record_content` on (contents, arguments and results) and off — through the
 * real SDK with an in-memory exporter.
 */
import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor, type ReadableSpan } from '@opentelemetry/sdk-trace-base';
import { afterEach, describe, expect, test } from 'vitest';
import { encodeBatchFrame, type Event } from '../protocol/index.js';
import { ModelError, type ModelChunk, type ModelClient, type ModelRequest } from '../src/model/types.js';
import { scriptedModel } from '../src/model/scripted.js';
import { AgentdMetrics, MAX_LABEL_CHARS, MAX_LABEL_VALUES } from '../src/telemetry/metrics.js';
import { TelemetryObserver } from '../src/telemetry/observer.js';
import { TraceBook } from '../src/telemetry/spans.js';
import { tracingWanted } from '../src/telemetry/tracing.js';
import { parsePrometheus } from './helpers/prometheus.js';

const ROUTE = { route: 'fast', provider: 'openai', model: 'gpt-x', base_url: 'https://llm.example:8443/v1', context_window: null } as const;

function request(text: string, signal = new AbortController().signal): ModelRequest {
  return { route: { ...ROUTE }, reasoning_effort: null, system: 'be brief', context: [{ role: 'user', text }], tools: [], signal, session_id: 's_1' };
}

/** A provider that streams the given chunks, or throws `error` after them. */
function provider(chunks: ModelChunk[], error?: Error): ModelClient {
  return {
    async *stream() {
      for (const c of chunks) yield c;
      if (error) throw error;
    },
  };
}

const USAGE: ModelChunk = { type: 'usage', input_tokens: 100, output_tokens: 20, cached_input_tokens: 60, reasoning_tokens: 5 };

async function drain(client: ModelClient, req: ModelRequest, stopAfter = Infinity): Promise<ModelChunk[]> {
  const got: ModelChunk[] = [];
  for await (const c of client.stream(req)) {
    got.push(c);
    if (got.length >= stopAfter) break;
  }
  return got;
}

async function values(metrics: AgentdMetrics) {
  return parsePrometheus((await metrics.scrape()).body);
}

function tracing() {
  const exporter = new InMemorySpanExporter();
  const provider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] });
  return { exporter, tracer: provider.getTracer('test'), provider };
}

const providers: BasicTracerProvider[] = [];
afterEach(async () => {
  for (const p of providers.splice(0)) await p.shutdown();
});

function event(msg: Event['msg'], turn_id: string | null = 't_1', ts = Date.now()): Event {
  return { submission_id: null, turn_id, ts, msg };
}

function batch(events: Event[], sequence = 1) {
  const at = Date.now();
  return { session_id: 's_1', sequence, committed_at: at, events, frame: encodeBatchFrame('s_1', sequence, at, JSON.stringify(events)) };
}

describe('the model-call wrapper', () => {
  test('counts an ok call, its tokens by kind, and passes the chunks through unchanged', async () => {
    const metrics = new AgentdMetrics();
    const observer = new TelemetryObserver(metrics, null);
    const chunks: ModelChunk[] = [{ type: 'text_delta', delta: 'hi' }, USAGE, { type: 'finish', reason: 'stop' }];
    expect(await drain(observer.modelClient(provider(chunks)), request('x'))).toEqual(chunks);
    const m = await values(metrics);
    expect(m.value('agentd_model_calls_total', { route: 'fast', outcome: 'ok' })).toBe(1);
    expect(m.value('agentd_model_call_seconds_count', { route: 'fast' })).toBe(1);
    expect(m.value('agentd_tokens_total', { route: 'fast', kind: 'input' })).toBe(100);
    expect(m.value('agentd_tokens_total', { route: 'fast', kind: 'output' })).toBe(20);
    expect(m.value('agentd_tokens_total', { route: 'fast', kind: 'cached' })).toBe(60);
    expect(m.value('agentd_tokens_total', { route: 'fast', kind: 'reasoning' })).toBe(5);
  });

  test('a failure counts under its code and is rethrown; a reader that stops early counts "aborted"', async () => {
    const metrics = new AgentdMetrics();
    const observer = new TelemetryObserver(metrics, null);
    const failing = observer.modelClient(provider([], new ModelError('rate_limited', '429')));
    await expect(drain(failing, request('x'))).rejects.toThrow('429');
    const plain = observer.modelClient(provider([], new Error('socket hang up')));
    await expect(drain(plain, request('x'))).rejects.toThrow('socket hang up');
    await drain(observer.modelClient(provider([{ type: 'text_delta', delta: 'a' }, { type: 'text_delta', delta: 'b' }])), request('x'), 1);
    const m = await values(metrics);
    expect(m.value('agentd_model_calls_total', { route: 'fast', outcome: 'rate_limited' })).toBe(1);
    expect(m.value('agentd_model_calls_total', { route: 'fast', outcome: 'error' })).toBe(1);
    expect(m.value('agentd_model_calls_total', { route: 'fast', outcome: 'aborted' })).toBe(1);
    expect(m.value('agentd_model_calls_total', { route: 'fast', outcome: 'ok' })).toBe(0);
  });

  test('a turn counts under the route of its last model call', async () => {
    const metrics = new AgentdMetrics();
    const observer = new TelemetryObserver(metrics, null);
    observer.committed(batch([event({ type: 'turn_started', turn_id: 't_1' })]));
    await drain(observer.modelClient(scriptedModel), request('hello'));
    observer.committed(batch([event({ type: 'turn_interrupted', reason: 'user' })], 2));
    observer.committed(batch([event({ type: 'turn_started', turn_id: 't_2' }, 't_2'), event({ type: 'turn_failed', error: { code: 'unknown_route', message: 'no' } }, 't_2')], 3));
    const m = await values(metrics);
    expect(m.value('agentd_turns_total', { route: 'fast', outcome: 'interrupted' })).toBe(1);
    expect(m.value('agentd_turns_total', { route: 'none', outcome: 'failed' })).toBe(1); // no model call in that turn
    expect(m.value('agentd_batches_committed_total')).toBe(3);
  });
});

test('a batch of streamed pieces is not parsed (its frame names no event the observer needs), even when their text looks like one', () => {
  const observer = new TelemetryObserver(new AgentdMetrics(), null);
  const deltas = [event({ type: 'agent_message_delta', delta: '"type":"turn_started"' }), event({ type: 'exec_output_delta', call_id: 'c', stream: 'stdout', chunk: '{"type":"tool_call_end"}' })];
  const frame = encodeBatchFrame('s_1', 1, 1, JSON.stringify(deltas));
  let parsed = 0;
  const lazy = (f: string, events: Event[]) => ({
    session_id: 's_1',
    sequence: 1,
    committed_at: 1,
    frame: f,
    get events() {
      parsed++;
      return events;
    },
  });
  observer.committed(lazy(frame, deltas));
  expect(parsed).toBe(0);
  const end = [event({ type: 'turn_interrupted', reason: 'user' })];
  observer.committed(lazy(encodeBatchFrame('s_1', 2, 1, JSON.stringify(end)), end));
  expect(parsed).toBe(1);
});

test(`tool labels: past ${MAX_LABEL_VALUES} distinct names or ${MAX_LABEL_CHARS} characters, "other"`, async () => {
  const metrics = new AgentdMetrics();
  const observer = new TelemetryObserver(metrics, null);
  const events: Event[] = [event({ type: 'turn_started', turn_id: 't_1' })];
  for (let i = 0; i < MAX_LABEL_VALUES + 10; i++) {
    events.push(event({ type: 'tool_call_begin', call_id: `c${i}`, tool: `made_up_${i}`, arguments: {} }));
    events.push(event({ type: 'tool_call_end', call_id: `c${i}`, status: 'error', output: 'unknown tool', duration_ms: 0 }));
  }
  // First: a name too long for a label (then the 256 distinct ones fill the table).
  events.splice(1, 0, event({ type: 'tool_call_begin', call_id: 'long', tool: 'x'.repeat(200), arguments: {} }), event({ type: 'tool_call_end', call_id: 'long', status: 'error', output: 'unknown tool', duration_ms: 0 }));
  observer.committed(batch(events));
  const m = await values(metrics);
  expect(m.samples.filter((x) => x.name === 'agentd_tool_calls_total').length).toBe(MAX_LABEL_VALUES + 1);
  expect(m.value('agentd_tool_calls_total', { tool: 'other', status: 'error' })).toBe(11);
  expect(m.value('agentd_tool_calls_total', { tool: 'made_up_0', status: 'error' })).toBe(1);
});

test('traces are wanted with an endpoint in the environment or the config, unless OTEL_SDK_DISABLED', () => {
  expect(tracingWanted(undefined, {})).toBe(false);
  expect(tracingWanted(undefined, { OTEL_EXPORTER_OTLP_ENDPOINT: '' })).toBe(false);
  expect(tracingWanted(undefined, { OTEL_EXPORTER_OTLP_ENDPOINT: 'http://c:4318' })).toBe(true);
  expect(tracingWanted(undefined, { OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'http://c:4318/v1/traces' })).toBe(true);
  expect(tracingWanted('http://c:4318', {})).toBe(true);
  expect(tracingWanted('http://c:4318', { OTEL_SDK_DISABLED: 'TRUE' })).toBe(false);
});

describe('spans', () => {
  async function turnWithTool(recordContent: boolean): Promise<ReadableSpan[]> {
    const { exporter, tracer, provider: p } = tracing();
    providers.push(p);
    const metrics = new AgentdMetrics();
    const observer = new TelemetryObserver(metrics, new TraceBook(tracer, recordContent));
    const t0 = Date.now();
    observer.committed(batch([event({ type: 'turn_started', turn_id: 't_1' }, 't_1', t0)]));
    await drain(observer.modelClient(provider([{ type: 'text_delta', delta: 'calling' }, { type: 'tool_call', call: { call_id: 'c1', tool: 'read_file', arguments: { path: 'a.txt' } } }, USAGE, { type: 'finish', reason: 'tool_calls' }])), request('read a.txt'));
    observer.committed(batch([event({ type: 'tool_call_begin', call_id: 'c1', tool: 'read_file', arguments: { path: 'a.txt' } }, 't_1', t0 + 1)], 2));
    const meta = observer.traceContext!('s_1', 'c1');
    observer.committed(batch([event({ type: 'tool_call_end', call_id: 'c1', status: 'ok', output: 'file body', duration_ms: 3 }, 't_1', t0 + 5)], 3));
    observer.committed(batch([event({ type: 'turn_complete', last_message: null, model_calls: 1, tool_calls: 1, failed_tool_calls: 0, usage: { input_tokens: 100, output_tokens: 20 }, duration_ms: 9 }, 't_1', t0 + 9)], 4));
    const spans = exporter.getFinishedSpans();
    const tool = spans.find((x) => x.name === 'execute_tool read_file')!;
    expect(meta).toEqual({ traceparent: `00-${tool.spanContext().traceId}-${tool.spanContext().spanId}-01` });
    expect(observer.traceContext!('s_1', 'c1')).toBeUndefined(); // the call ended
    return spans;
  }

  test('record_content on: messages, tool arguments and results on the spans; server address from the route', async () => {
    const spans = await turnWithTool(true);
    expect(spans.map((x) => x.name).sort()).toEqual(['chat gpt-x', 'execute_tool read_file', 'invoke_agent agentd']);
    const turn = spans.find((x) => x.name === 'invoke_agent agentd')!;
    const chat = spans.find((x) => x.name === 'chat gpt-x')!;
    const tool = spans.find((x) => x.name === 'execute_tool read_file')!;
    expect(chat.parentSpanContext?.spanId).toBe(turn.spanContext().spanId);
    expect(tool.parentSpanContext?.spanId).toBe(turn.spanContext().spanId);
    expect(chat.attributes).toMatchObject({
      'gen_ai.provider.name': 'openai',
      'gen_ai.request.model': 'gpt-x',
      'gen_ai.usage.cache_read.input_tokens': 60,
      'server.address': 'llm.example',
      'server.port': 8443,
      'gen_ai.system_instructions': 'be brief',
    });
    expect(JSON.parse(chat.attributes['gen_ai.input.messages'] as string)).toEqual([{ role: 'user', text: 'read a.txt' }]);
    expect(JSON.parse(chat.attributes['gen_ai.output.messages'] as string)).toEqual([
      { role: 'assistant', content: 'calling', tool_calls: [{ id: 'c1', name: 'read_file', arguments: { path: 'a.txt' } }], finish_reason: 'tool_calls' },
    ]);
    expect(tool.attributes).toMatchObject({ 'gen_ai.tool.call.arguments': '{"path":"a.txt"}', 'gen_ai.tool.call.result': 'file body', 'gen_ai.tool.call.id': 'c1' });
    expect(turn.attributes).toMatchObject({ 'gen_ai.usage.input_tokens': 100, 'agentd.turn.outcome': 'complete' });
  });

  test('record_content off (the default): none of them', async () => {
    const spans = await turnWithTool(false);
    for (const x of spans) {
      for (const key of ['gen_ai.input.messages', 'gen_ai.output.messages', 'gen_ai.system_instructions', 'gen_ai.tool.call.arguments', 'gen_ai.tool.call.result']) {
        expect(x.attributes[key], `${x.name} ${key}`).toBeUndefined();
      }
    }
  });

  test('without tracing the observer gives MCP requests no trace context', () => {
    expect(new TelemetryObserver(new AgentdMetrics(), null).traceContext).toBeUndefined();
  });
});
