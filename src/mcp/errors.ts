/**
 * Typed failures of MCP servers and calls. `kind` says what happened; `message` names
 * the server and the cause, ready for a warning event or a tool result.
 */
export type McpFailureKind =
  | 'start_failed'
  | 'startup_timeout'
  | 'crashed'
  | 'protocol'
  | 'call_timeout'
  | 'cancelled'
  | 'lost'
  | 'call_failed'
  | 'not_running';

export class McpServerError extends Error {
  constructor(
    readonly kind: McpFailureKind,
    readonly server: string,
    detail: string,
  ) {
    super(`MCP server "${server}": ${detail}`);
    this.name = 'McpServerError';
  }
}
