/**
 * The session's live status as the transcript knows it: model, working directory,
 * running turn, pending approval and token usage.
 */
import type { ExecApprovalRequestMsg, ModelInfo, SessionStatus, TokenUsage } from '../../protocol/index.js';

export interface SessionInfo {
  sessionId: string | null;
  title: string | null;
  model: ModelInfo | null;
  cwd: string | null;
  approvalPolicy: string | null;
  activeTurnId: string | null;
  /** ts of the running turn's turn_started event, if seen. */
  turnStartedAt: number | null;
  pendingApproval: ExecApprovalRequestMsg | null;
  /** Session token totals, from the last token_usage event. */
  usage: TokenUsage | null;
  /**
   * The context gauge: estimated tokens of the next model call against the window — from
   * the descriptor, then the last call's input + output, or a compaction's tokens_after.
   */
  context: { estimated: number; window: number | null } | null;
}

/** Nothing known yet. */
export const emptyInfo = (): SessionInfo => ({
  sessionId: null,
  title: null,
  model: null,
  cwd: null,
  approvalPolicy: null,
  activeTurnId: null,
  turnStartedAt: null,
  pendingApproval: null,
  usage: null,
  context: null,
});

/** Status as the session would report it. */
export function sessionInfoStatus(info: SessionInfo): SessionStatus {
  if (info.pendingApproval) return 'awaiting_approval';
  if (info.activeTurnId) return 'running';
  return 'idle';
}

/**
 * The fields of `info` that newer information must win with: every known (non-null)
 * field, and the turn / approval state as it is, null or not.
 */
export function pickLive(info: SessionInfo): Partial<SessionInfo> {
  const out: Partial<SessionInfo> = {};
  for (const [k, v] of Object.entries(info) as [keyof SessionInfo, unknown][]) {
    if (v !== null) (out as Record<string, unknown>)[k] = v;
  }
  out.activeTurnId = info.activeTurnId;
  out.pendingApproval = info.pendingApproval;
  out.turnStartedAt = info.turnStartedAt;
  return out;
}
