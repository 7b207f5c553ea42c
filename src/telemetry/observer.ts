/**
 * The session observer (docs/operations.md): the host hands it every batch its sessions
 * commit, every tick of the shared writer, and its model clients to wrap. From committed
 * events it counts turns, tool calls, approvals and compactions, and (tracing on) drives
 * the turn and tool spans; the session core knows nothing of it.
 */
import type { Event } from '../../protocol/index.js';
import type { CommittedBatch } from '../journal/journal.js';
import type { CommitTick } from '../journal/writer.js';
import type { ModelClient } from '../model/types.js';
import type { SessionObserver } from '../session/observer.js';
import type { AgentdMetrics } from './metrics.js';
import { observeModel, type ModelObservation } from './model.js';
import type { TraceBook } from './spans.js';

/** A frame holding an event this observer looks at (every other event is skipped). */
const WANTED = /"type":"(?:turn_|tool_call_(?:begin|end)"|approval_resolved"|context_compacted")/;

/** Outcome label of each turn end. */
const OUTCOME = { turn_complete: 'complete', turn_failed: 'failed', turn_interrupted: 'interrupted' } as const;

export class TelemetryObserver implements SessionObserver {
  /** Per session with an open turn: the route of its latest model call (dropped when the turn ends). */
  private readonly routes = new Map<string, string>();
  /** Per session: its open tool calls' tool names (call id → tool), for the tool label at their end. */
  private readonly tools = new Map<string, Map<string, string>>();
  private readonly models: ModelObservation;

  constructor(
    private readonly metrics: AgentdMetrics,
    private readonly traces: TraceBook | null,
  ) {
    this.models = { metrics, traces, called: (sessionId, route) => this.routes.set(sessionId, route) };
    // Only with tracing on do MCP requests carry a trace context.
    if (!traces) this.traceContext = undefined;
  }

  committed(batch: CommittedBatch): void {
    this.metrics.batchesCommitted.inc();
    // Parsing a batch's events costs more than committing it (a group commit of deltas is
    // up to 256 KiB): the frame is searched first for the event types this needs. JSON
    // escapes quotes inside strings, so `"type":"…` occurs only where an event's type is.
    if (!WANTED.test(batch.frame)) return;
    const events = batch.events;
    for (let i = 0; i < events.length; i++) this.event(batch.session_id, events[i]!);
  }

  commitTick(tick: CommitTick): void {
    this.metrics.commitSeconds.observe(tick.seconds);
    this.metrics.commitSessions.observe(tick.sessions);
    if (tick.failed > 0) this.metrics.commitFailures.inc(tick.failed);
  }

  modelClient(client: ModelClient): ModelClient {
    return observeModel(client, this.models);
  }

  traceContext?(sessionId: string, callId: string): Record<string, string> | undefined {
    return this.traces?.toolContext(sessionId, callId);
  }

  private event(sessionId: string, event: Event): void {
    const { msg, ts } = event;
    const { metrics, traces } = this;
    switch (msg.type) {
      case 'turn_started':
        traces?.turnStarted(sessionId, msg.turn_id, ts);
        return;
      case 'turn_resumed':
        traces?.turnStarted(sessionId, event.turn_id, ts, true);
        return;
      case 'turn_complete':
      case 'turn_failed':
      case 'turn_interrupted': {
        metrics.turns.inc({ route: this.routes.get(sessionId) ?? 'none', outcome: OUTCOME[msg.type] });
        this.routes.delete(sessionId);
        this.tools.delete(sessionId);
        traces?.turnEnded(sessionId, msg, ts);
        return;
      }
      case 'tool_call_begin': {
        let open = this.tools.get(sessionId);
        if (!open) this.tools.set(sessionId, (open = new Map()));
        open.set(msg.call_id, msg.tool);
        traces?.toolBegun(sessionId, msg, ts);
        return;
      }
      case 'tool_call_end': {
        const open = this.tools.get(sessionId);
        const tool = open?.get(msg.call_id) ?? 'unknown';
        open?.delete(msg.call_id);
        metrics.toolCalls.inc({ tool: metrics.toolLabel(tool), status: msg.status });
        traces?.toolEnded(sessionId, msg, ts);
        return;
      }
      case 'approval_resolved':
        metrics.approvals.inc({ decision: msg.decision });
        return;
      case 'context_compacted':
        metrics.compactions.inc({ reason: msg.reason });
        return;
      default:
        return;
    }
  }
}
