/**
 * The model-call wrapper (docs/operations.md): every model call of the host goes through
 * it. It counts the call by route and outcome, times it, adds up the tokens the provider
 * reports and, with tracing on, records the call's `chat {model}` span under its turn.
 * The chunks pass through unchanged.
 */
import { SpanStatusCode, type Span } from '@opentelemetry/api';
import { ModelError, type ModelChunk, type ModelClient, type ModelRequest } from '../model/types.js';
import { contentValue, GEN_AI, providerName, serverOf } from './genai.js';
import type { AgentdMetrics } from './metrics.js';
import type { TraceBook } from './spans.js';

export interface ModelObservation {
  metrics: AgentdMetrics;
  traces: TraceBook | null;
  /** The route of the session's latest model call (its turn's route for `agentd_turns_total`). */
  called(sessionId: string, route: string): void;
}

/** The client, observed. */
export function observeModel(client: ModelClient, seen: ModelObservation): ModelClient {
  return { stream: (request) => observedStream(client, request, seen) };
}

/** The outcome label of a call that threw. */
function failureOf(err: unknown, signal: AbortSignal): string {
  if (err instanceof ModelError) return err.code;
  return signal.aborted ? 'aborted' : 'error';
}

async function* observedStream(client: ModelClient, request: ModelRequest, seen: ModelObservation): AsyncGenerator<ModelChunk> {
  const route = request.route.route;
  if (request.session_id !== undefined) seen.called(request.session_id, route);
  const span = seen.traces ? startSpan(seen.traces, request) : null;
  const started = performance.now();
  let outcome = 'aborted'; // the consumer stopped reading (interrupt, idle timeout, a stopped session)
  let usage: Extract<ModelChunk, { type: 'usage' }> | null = null;
  let finish: string | null = null;
  let text = '';
  const calls: Array<{ id: string; name: string; arguments: unknown }> = [];
  const keep = span !== null && seen.traces!.recordContent;
  try {
    for await (const chunk of client.stream(request)) {
      if (chunk.type === 'usage') usage = chunk;
      else if (chunk.type === 'finish') finish = chunk.reason;
      else if (keep && chunk.type === 'text_delta') text += chunk.delta;
      else if (keep && chunk.type === 'tool_call') calls.push({ id: chunk.call.call_id, name: chunk.call.tool, arguments: chunk.call.arguments });
      yield chunk;
    }
    outcome = 'ok';
  } catch (err) {
    outcome = failureOf(err, request.signal);
    if (span) span.setStatus({ code: SpanStatusCode.ERROR, message: err instanceof Error ? err.message : String(err) });
    throw err;
  } finally {
    const { metrics } = seen;
    metrics.modelCalls.inc({ route, outcome });
    metrics.modelCallSeconds.observe({ route }, (performance.now() - started) / 1000);
    if (usage) {
      metrics.tokens.inc({ route, kind: 'input' }, usage.input_tokens);
      metrics.tokens.inc({ route, kind: 'output' }, usage.output_tokens);
      metrics.tokens.inc({ route, kind: 'cached' }, usage.cached_input_tokens ?? 0);
      metrics.tokens.inc({ route, kind: 'reasoning' }, usage.reasoning_tokens ?? 0);
    }
    if (span) endSpan(span, { model: request.route.model, outcome, usage, finish, text, calls, recordContent: seen.traces!.recordContent });
  }
}

function startSpan(traces: TraceBook, request: ModelRequest): Span {
  const { route } = request;
  const server = serverOf(route);
  const span = traces.startChat(request.session_id, `chat ${route.model}`, {
    [GEN_AI.operationName]: 'chat',
    [GEN_AI.providerName]: providerName(route.provider),
    [GEN_AI.requestModel]: route.model,
    ...(request.session_id !== undefined && { [GEN_AI.conversationId]: request.session_id }),
    'agentd.route': route.route,
    ...(server && { 'server.address': server.address, 'server.port': server.port }),
  });
  if (traces.recordContent) {
    if (request.system) span.setAttribute(GEN_AI.systemInstructions, request.system);
    span.setAttribute(GEN_AI.inputMessages, contentValue(request.context));
  }
  return span;
}

interface CallEnd {
  model: string;
  outcome: string;
  usage: Extract<ModelChunk, { type: 'usage' }> | null;
  finish: string | null;
  text: string;
  calls: Array<{ id: string; name: string; arguments: unknown }>;
  recordContent: boolean;
}

function endSpan(span: Span, end: CallEnd): void {
  // Providers' streams do not name the model that answered: the requested one is reported.
  span.setAttribute(GEN_AI.responseModel, end.model);
  if (end.usage) {
    span.setAttributes({
      [GEN_AI.inputTokens]: end.usage.input_tokens,
      [GEN_AI.outputTokens]: end.usage.output_tokens,
      ...(end.usage.cached_input_tokens !== undefined && { [GEN_AI.cacheReadTokens]: end.usage.cached_input_tokens }),
    });
  }
  if (end.finish !== null) span.setAttribute(GEN_AI.finishReasons, [end.finish]);
  if (end.outcome !== 'ok') span.setAttribute('error.type', end.outcome);
  if (end.recordContent && end.outcome === 'ok') {
    span.setAttribute(GEN_AI.outputMessages, contentValue([{ role: 'assistant', content: end.text, tool_calls: end.calls, finish_reason: end.finish }]));
  }
  span.end();
}
