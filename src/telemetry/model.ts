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
  return { stream: (request) => ({ [Symbol.asyncIterator]: () => new ObservedCall(client, request, seen) }) };
}

/** The outcome label of a call that threw. */
function failureOf(err: unknown, signal: AbortSignal): string {
  if (err instanceof ModelError) return err.code;
  return signal.aborted ? 'aborted' : 'error';
}

type Usage = Extract<ModelChunk, { type: 'usage' }>;
type ToolCallOut = { id: string; name: string; arguments: unknown };

/**
 * One observed call: the provider's iterator, passed through. The consumer awaits the
 * provider's own promises (no extra async step per chunk: the streaming hot path); each
 * result is looked at on a side branch of that promise.
 */
class ObservedCall implements AsyncIterator<ModelChunk> {
  private readonly inner: AsyncIterator<ModelChunk>;
  private readonly started = performance.now();
  private readonly span: Span | null;
  /** Keep the reply's text and tool calls (content on spans). */
  private readonly keep: boolean;
  private usage: Usage | null = null;
  private finish: string | null = null;
  private text = '';
  private readonly calls: ToolCallOut[] = [];
  private ended = false;
  private readonly onResult = (r: IteratorResult<ModelChunk>): void => this.look(r);
  private readonly onError = (err: unknown): void => this.end(failureOf(err, this.request.signal), err);

  constructor(
    client: ModelClient,
    private readonly request: ModelRequest,
    private readonly seen: ModelObservation,
  ) {
    if (request.session_id !== undefined) seen.called(request.session_id, request.route.route);
    this.span = seen.traces ? startSpan(seen.traces, request) : null;
    this.keep = this.span !== null && seen.traces!.recordContent;
    this.inner = client.stream(request)[Symbol.asyncIterator]();
  }

  next(): Promise<IteratorResult<ModelChunk>> {
    let p: Promise<IteratorResult<ModelChunk>>;
    try {
      p = this.inner.next();
    } catch (err) {
      this.onError(err);
      throw err;
    }
    p.then(this.onResult, this.onError);
    return p;
  }

  /** The consumer stopped reading (interrupt, idle timeout, a stopped session). */
  return(value?: unknown): Promise<IteratorResult<ModelChunk>> {
    this.end('aborted');
    return this.inner.return ? this.inner.return(value) : Promise.resolve({ done: true, value: undefined });
  }

  private look(r: IteratorResult<ModelChunk>): void {
    if (r.done) return this.end('ok');
    const chunk = r.value;
    if (chunk.type === 'usage') this.usage = chunk;
    else if (chunk.type === 'finish') this.finish = chunk.reason;
    else if (this.keep && chunk.type === 'text_delta') this.text += chunk.delta;
    else if (this.keep && chunk.type === 'tool_call') this.calls.push({ id: chunk.call.call_id, name: chunk.call.tool, arguments: chunk.call.arguments });
  }

  private end(outcome: string, err?: unknown): void {
    if (this.ended) return;
    this.ended = true;
    const { metrics } = this.seen;
    const route = this.request.route.route;
    metrics.modelCalls.inc({ route, outcome });
    metrics.modelCallSeconds.observe({ route }, (performance.now() - this.started) / 1000);
    const usage = this.usage;
    if (usage) {
      metrics.tokens.inc({ route, kind: 'input' }, usage.input_tokens);
      metrics.tokens.inc({ route, kind: 'output' }, usage.output_tokens);
      metrics.tokens.inc({ route, kind: 'cached' }, usage.cached_input_tokens ?? 0);
      metrics.tokens.inc({ route, kind: 'reasoning' }, usage.reasoning_tokens ?? 0);
    }
    if (!this.span) return;
    if (err !== undefined) this.span.setStatus({ code: SpanStatusCode.ERROR, message: err instanceof Error ? err.message : String(err) });
    endSpan(this.span, { model: this.request.route.model, outcome, usage, finish: this.finish, text: this.text, calls: this.calls, recordContent: this.keep });
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
  usage: Usage | null;
  finish: string | null;
  text: string;
  calls: ToolCallOut[];
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
