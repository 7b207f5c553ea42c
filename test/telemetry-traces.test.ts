/**
 * OpenTelemetry traces of a real daemon (docs/operations.md "Traces") exported over
 * OTLP/HTTP to a receiver in this test: the spans of a turn with a shell call, a turn with
 * an MCP call and a turn whose model call fails — their names, kinds, parent/child links
 * and GenAI attributes; the MCP server (the test fixture) receives the tool span's
 * `traceparent` in `params._meta`; no content without `telemetry.record_content`. Without
 * an endpoint MCP requests carry no `_meta`.
 */
import { afterEach, expect, test } from 'vitest';
import { connect, type TestClient } from './helpers/client.js';
import { startDaemon, type Daemon } from './helpers/daemon.js';
import { fixtureServer } from './helpers/mcp.js';
import { startOtlpReceiver, type OtlpReceiver, type ReceivedSpan } from './helpers/otlp.js';
import { cleanup, tempDir } from './helpers/session.js';

const daemons: Daemon[] = [];
const clients: TestClient[] = [];
const receivers: OtlpReceiver[] = [];
const dirs: string[] = [];
afterEach(async () => {
  for (const c of clients.splice(0)) await c.close().catch(() => {});
  for (const d of daemons.splice(0)) await d.stop('SIGKILL').catch(() => {});
  for (const r of receivers.splice(0)) await r.close();
  dirs.splice(0).forEach(cleanup);
});

const CONFIG = { approval_policy: 'auto', mcp_servers: { fx: fixtureServer('normal', { approval: 'auto' }) } };

async function daemonWith(env: Record<string, string>) {
  const d = await startDaemon({ config: CONFIG, env });
  daemons.push(d);
  const c = await connect(d);
  clients.push(c);
  const cwd = tempDir('agentd-traces-');
  dirs.push(cwd);
  const s = (await c.createSession({ cwd })).session_id as string;
  await c.attach(s);
  const turn = async (text: string) => {
    const id = await c.submitMessage(s, text);
    const end = await c.waitTurnEnd(s, id, 20_000);
    const events = c.batches(s).flatMap((b) => b.events as Array<{ submission_id: string | null; turn_id: string | null; msg: any }>);
    const turnId = events.find((e) => e.submission_id === id && e.msg.type === 'turn_started')!.msg.turn_id as string;
    return { end, events: events.filter((e) => e.turn_id === turnId) };
  };
  return { d, c, s, turn };
}

const byName = (spans: ReceivedSpan[], name: string) => spans.filter((s) => s.name === name);

test('a turn, its model calls and its tool calls (shell and MCP): names, links, GenAI attributes, traceparent at the MCP server', async () => {
  const receiver = await startOtlpReceiver();
  receivers.push(receiver);
  const { s, turn } = await daemonWith({ OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url });

  const shell = await turn('!sh echo traced');
  expect(shell.end.type).toBe('turn_complete');
  const mcp = await turn('!mcp fx__meta {}');
  expect(mcp.end.type).toBe('turn_complete');
  const failed = await turn('!fail');
  expect(failed.end.type).toBe('turn_failed');

  const spans = await receiver.waitFor(
    (all) => byName(all, 'invoke_agent agentd').length === 3 && byName(all, 'chat scripted').length === 5 && all.filter((x) => x.name.startsWith('execute_tool ')).length === 2,
    20_000,
    'the spans of three turns',
  );
  expect(receiver.contentTypes.every((t) => t.startsWith('application/json'))).toBe(true);
  const turns = byName(spans, 'invoke_agent agentd').sort((a, b) => Number(a.startNs - b.startNs));
  for (const t of turns) {
    expect(t.parentSpanId).toBe('');
    expect(t.kind).toBe(1); // INTERNAL
    expect(t.attributes).toMatchObject({ 'gen_ai.operation.name': 'invoke_agent', 'gen_ai.agent.name': 'agentd', 'gen_ai.conversation.id': s });
    expect(t.resource['service.name']).toBe('agentd');
  }
  expect(new Set(turns.map((t) => t.traceId)).size).toBe(3);
  const childrenOf = (parent: ReceivedSpan) => spans.filter((x) => x.parentSpanId === parent.spanId && x.traceId === parent.traceId);

  // Turn 1: chat (asks for the shell call) → execute_tool shell → chat (answers).
  const [t1, t2, t3] = turns as [ReceivedSpan, ReceivedSpan, ReceivedSpan];
  const c1 = childrenOf(t1).sort((a, b) => Number(a.startNs - b.startNs));
  expect(c1.map((x) => x.name)).toEqual(['chat scripted', 'execute_tool shell', 'chat scripted']);
  const begin = shell.events.find((e) => e.msg.type === 'tool_call_begin')!.msg;
  expect(c1[1]!.attributes).toMatchObject({ 'gen_ai.operation.name': 'execute_tool', 'gen_ai.tool.name': 'shell', 'gen_ai.tool.call.id': begin.call_id });
  for (const chat of [c1[0]!, c1[2]!]) {
    expect(chat.kind).toBe(3); // CLIENT
    expect(chat.attributes).toMatchObject({
      'gen_ai.operation.name': 'chat',
      'gen_ai.provider.name': 'agentd.scripted',
      'gen_ai.request.model': 'scripted',
      'gen_ai.response.model': 'scripted',
      'gen_ai.conversation.id': s,
    });
    expect(chat.attributes['gen_ai.usage.input_tokens']).toBeGreaterThan(0);
    expect(chat.attributes['gen_ai.usage.output_tokens']).toBeGreaterThan(0);
  }
  expect(c1[0]!.attributes['gen_ai.response.finish_reasons']).toEqual(['tool_calls']);
  expect(c1[2]!.attributes['gen_ai.response.finish_reasons']).toEqual(['stop']);
  // The tool span sits between the two model calls.
  expect(c1[1]!.startNs >= c1[0]!.endNs).toBe(true);
  expect(c1[1]!.endNs <= c1[2]!.startNs).toBe(true);

  // Turn 2: the MCP call; the fixture server saw this span's traceparent in params._meta.
  const c2 = childrenOf(t2).sort((a, b) => Number(a.startNs - b.startNs));
  expect(c2.map((x) => x.name)).toEqual(['chat scripted', 'execute_tool fx__meta', 'chat scripted']);
  const toolSpan = c2[1]!;
  const result = mcp.events.find((e) => e.msg.type === 'tool_call_end')!.msg;
  expect(result.status).toBe('ok');
  const meta = JSON.parse(result.output) as { traceparent?: string };
  expect(meta.traceparent).toBe(`00-${toolSpan.traceId}-${toolSpan.spanId}-01`);

  // Turn 3: the failed model call, and the failed turn.
  const c3 = childrenOf(t3);
  expect(c3.map((x) => x.name)).toEqual(['chat scripted']);
  expect(c3[0]!.status.code).toBe(2); // ERROR
  expect(c3[0]!.attributes['error.type']).toBe('scripted_failure');
  expect(t3.status.code).toBe(2);
  expect(t3.attributes['error.type']).toBe('scripted_failure');

  // No content without telemetry.record_content.
  for (const x of spans) {
    for (const key of ['gen_ai.input.messages', 'gen_ai.output.messages', 'gen_ai.system_instructions', 'gen_ai.tool.call.arguments', 'gen_ai.tool.call.result']) {
      expect(x.attributes[key], `${x.name} ${key}`).toBeUndefined();
    }
  }
}, 60_000);

test('no endpoint (the default): MCP requests carry no _meta', async () => {
  const { turn } = await daemonWith({ OTEL_EXPORTER_OTLP_ENDPOINT: '', OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: '' });
  const mcp = await turn('!mcp fx__meta {}');
  expect(mcp.end.type).toBe('turn_complete');
  expect(mcp.events.find((e) => e.msg.type === 'tool_call_end')!.msg.output).toBe('null');
}, 30_000);
