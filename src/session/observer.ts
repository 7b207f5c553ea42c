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
