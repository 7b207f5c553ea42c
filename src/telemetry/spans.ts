/**
 * The spans of sessions' turns (docs/operations.md "Traces"): an `invoke_agent agentd`
 * span per turn, an `execute_tool {name}` span per tool call under it, and the parent of
 * each model call's `chat {model}` span. Driven by committed events (the observer) and by
 * the model-call wrapper; parents are passed explicitly (no context manager). The W3C
 * `traceparent` of a running tool call is what its MCP request carries.
 */
import { context, SpanKind, SpanStatusCode, trace, type Span, type Tracer } from '@opentelemetry/api';
import type { ToolCallBeginMsg, ToolCallEndMsg, TurnEndMsg } from '../../protocol/index.js';
import { AGENT_NAME, contentValue, GEN_AI, INVOKE_AGENT_SPAN } from './genai.js';

interface ToolTrace {
  msg: ToolCallBeginMsg;
  begunAt: number;
  span: Span | null;
}

interface TurnTrace {
  span: Span;
  calls: Map<string, ToolTrace>;
  /** When the last tool call of the turn ended: the next one starts no earlier (calls run one at a time). */
  lastToolEnd: number;
}

/** The W3C trace-context header value of a span. */
export function traceparentOf(span: Span): string {
  const c = span.spanContext();
  return `00-${c.traceId}-${c.spanId}-${(c.traceFlags & 0xff).toString(16).padStart(2, '0')}`;
}

export class TraceBook {
  private readonly turns = new Map<string, TurnTrace>();

  constructor(
    readonly tracer: Tracer,
    /** `telemetry.record_content`: tool arguments and results on the spans. */
    readonly recordContent: boolean,
  ) {}

  /** A turn began (or resumed after a restart: a new span, the old one went with the old process). */
  turnStarted(sessionId: string, turnId: string | null, at: number, resumed = false): void {
    if (resumed && this.turns.has(sessionId)) return;
    this.turns.get(sessionId)?.span.end(at); // a turn that never said it ended
    const span = this.tracer.startSpan(INVOKE_AGENT_SPAN, {
      kind: SpanKind.INTERNAL,
      startTime: at,
      attributes: {
        [GEN_AI.operationName]: 'invoke_agent',
        [GEN_AI.agentName]: AGENT_NAME,
        [GEN_AI.conversationId]: sessionId,
        ...(turnId !== null && { 'agentd.turn.id': turnId }),
        ...(resumed && { 'agentd.turn.resumed': true }),
      },
    });
    this.turns.set(sessionId, { span, calls: new Map(), lastToolEnd: at });
  }

  turnEnded(sessionId: string, msg: TurnEndMsg, at: number): void {
    const turn = this.turns.get(sessionId);
    if (!turn) return;
    this.turns.delete(sessionId);
    for (const call of turn.calls.values()) call.span?.end(at);
    const { span } = turn;
    span.setAttribute('agentd.turn.outcome', msg.type.slice('turn_'.length));
    if (msg.type === 'turn_complete') {
      span.setAttributes({ [GEN_AI.inputTokens]: msg.usage.input_tokens, [GEN_AI.outputTokens]: msg.usage.output_tokens });
    } else if (msg.type === 'turn_failed') {
      span.setAttribute('error.type', msg.error.code);
      span.setStatus({ code: SpanStatusCode.ERROR, message: msg.error.message });
    }
    span.end(at);
  }

  /** The parent of a model call made for this session now (its open turn), if any. */
  turnSpan(sessionId: string): Span | undefined {
    return this.turns.get(sessionId)?.span;
  }

  toolBegun(sessionId: string, msg: ToolCallBeginMsg, at: number): void {
    this.turns.get(sessionId)?.calls.set(msg.call_id, { msg, begunAt: at, span: null });
  }

  toolEnded(sessionId: string, msg: ToolCallEndMsg, at: number): void {
    const turn = this.turns.get(sessionId);
    const call = turn?.calls.get(msg.call_id);
    if (!turn || !call) return;
    turn.calls.delete(msg.call_id);
    const span = this.toolSpan(turn, call, at);
    if (this.recordContent) span.setAttribute(GEN_AI.toolCallResult, msg.output);
    span.setAttribute('agentd.tool.status', msg.status);
    if (msg.exit_code !== undefined && msg.exit_code !== null) span.setAttribute('agentd.tool.exit_code', msg.exit_code);
    if (msg.status !== 'ok') {
      span.setAttribute('error.type', msg.status);
      span.setStatus({ code: SpanStatusCode.ERROR, message: `tool call ${msg.status}` });
    }
    span.end(at);
    turn.lastToolEnd = Math.max(turn.lastToolEnd, at);
  }

  /** The `params._meta` of an MCP request made by this tool call: its span's `traceparent`. */
  toolContext(sessionId: string, callId: string): Record<string, string> | undefined {
    const turn = this.turns.get(sessionId);
    const call = turn?.calls.get(callId);
    if (!turn || !call) return undefined;
    return { traceparent: traceparentOf(this.toolSpan(turn, call, Date.now())) };
  }

  /** A model call's span, under the session's open turn. */
  startChat(sessionId: string | undefined, name: string, attributes: Record<string, string | number>): Span {
    const parent = sessionId === undefined ? undefined : this.turns.get(sessionId)?.span;
    const ctx = parent ? trace.setSpan(context.active(), parent) : context.active();
    return this.tracer.startSpan(name, { kind: SpanKind.CLIENT, attributes }, ctx);
  }

  /**
   * The call's span, made when first needed: it starts when the call could start — after
   * the previous call of the turn ended (calls run one at a time), approval wait included.
   */
  private toolSpan(turn: TurnTrace, call: ToolTrace, now: number): Span {
    if (call.span) return call.span;
    const { msg } = call;
    const start = Math.min(now, Math.max(call.begunAt, turn.lastToolEnd));
    call.span = this.tracer.startSpan(
      `execute_tool ${msg.tool}`,
      {
        kind: SpanKind.INTERNAL,
        startTime: start,
        attributes: {
          [GEN_AI.operationName]: 'execute_tool',
          [GEN_AI.toolName]: msg.tool,
          [GEN_AI.toolCallId]: msg.call_id,
          ...(this.recordContent && { [GEN_AI.toolCallArguments]: contentValue(msg.arguments) }),
        },
      },
      trace.setSpan(context.active(), turn.span),
    );
    return call.span;
  }
}
