/**
 * The host's telemetry seam (docs/operations.md): an observer sees every batch a resident
 * session of the host commits, may wrap the model clients, and gives the trace context of
 * a tool call to its MCP requests. The session core never calls telemetry itself; without
 * an observer none of this runs.
 */
import type { CommittedBatch } from '../journal/journal.js';
import type { CommitTick } from '../journal/writer.js';
import type { ModelClient } from '../model/types.js';

export interface SessionObserver {
  /** A batch a session of this host committed (called before its subscribers; must not throw). */
  committed(batch: CommittedBatch): void;
  /** A tick of the shared writer committed (its duration, how many sessions' writes). */
  commitTick?(tick: CommitTick): void;
  /** The client every model call goes through (wraps the route's own client). */
  modelClient?(client: ModelClient): ModelClient;
  /** Fields of an MCP request's `params._meta` for this tool call (its trace context), if any. */
  traceContext?(sessionId: string, callId: string): Record<string, string> | undefined;
}

/** What a telemetry collector reads of the host at scrape time. */
export interface ResidentSessionStats {
  /** Resident sessions by status (idle, running, awaiting_approval). */
  byStatus: Record<string, number>;
  /** Resident sessions waiting for an approval. */
  approvalsPending: number;
}

/**
 * Several observers as one (telemetry, the notification webhook, the model-failure log):
 * each sees every batch and tick in order; model clients are wrapped by each in turn; the
 * first observer with a trace context gives it. A hook none of them has stays absent.
 */
export function combineObservers(...all: Array<SessionObserver | null | undefined>): SessionObserver | undefined {
  const list = all.filter((o): o is SessionObserver => o != null);
  if (list.length <= 1) return list[0];
  const ticks = list.filter((o) => o.commitTick);
  const wrappers = list.filter((o) => o.modelClient);
  const tracer = list.find((o) => o.traceContext);
  return {
    committed: (batch) => {
      for (const o of list) o.committed(batch);
    },
    ...(ticks.length > 0 && {
      commitTick: (tick) => {
        for (const o of ticks) o.commitTick!(tick);
      },
    }),
    ...(wrappers.length > 0 && { modelClient: (client) => wrappers.reduce((c, o) => o.modelClient!(c), client) }),
    ...(tracer && { traceContext: (sessionId, callId) => tracer.traceContext!(sessionId, callId) }),
  };
}
