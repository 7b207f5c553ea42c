/**
 * The tool seam: a Tool runs one call for a turn. Tools never throw for failures the
 * model should see (bad path, non-zero exit): they return a ToolResult with status
 * "error" and a readable output.
 */
import type { OutputStream, SubagentStatus } from '../../protocol/index.js';
import type { ToolSpec } from '../model/types.js';

export interface ToolContext {
  /** The session's working directory; file tools are confined to it. */
  cwd: string;
  /** Aborted on interrupt: the tool must stop (kill its process group) and resolve. */
  signal: AbortSignal;
  /** Streamed output (shell); each call becomes an `exec_output_delta` event. */
  onOutput(stream: OutputStream, chunk: string): void;
  /** The model's id of this call (the session always gives it). */
  callId?: string;
  /** The session making the call (the session always gives it; MCP requests carry its trace context). */
  sessionId?: string;
  /** `delegate`: the call started (or found) this child session; journaled as `subagent_started`. */
  onSubagent?(childSessionId: string): void;
}

export interface ToolResult {
  status: 'ok' | 'error';
  output: string;
  exit_code?: number;
  /** `delegate`: the child session and how its turn ended (journaled as `subagent_finished`). */
  subagent?: { child_session_id: string; status: SubagentStatus };
}

export interface Tool {
  spec: ToolSpec;
  /** Under approval policy `ask`, calls of this tool wait for an exec_approval. */
  needsApproval: boolean;
  run(args: Record<string, unknown>, ctx: ToolContext): Promise<ToolResult>;
}
