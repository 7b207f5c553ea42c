/**
 * What agentd's events and frames are in the Agent Client Protocol (docs/editors.md
 * "What maps to what"): tool kinds and locations, tool call updates, prompt content
 * blocks → one message text, the four permission options, stop reasons. Pure functions.
 */
import type * as acp from '@agentclientprotocol/sdk';
import { ApprovalDecisionSchema, approveForSessionLabel, type ApprovalDecision, type ExecApprovalRequestMsg, type ToolCallBeginMsg, type ToolCallEndMsg, type TurnEndMsg } from '../../protocol/index.js';

/** `kind` of a tool call: execute for shell, read / edit / search for the file tools, other for MCP and delegate. */
export function toolKind(tool: string): acp.ToolKind {
  switch (tool) {
    case 'shell':
      return 'execute';
    case 'read_file':
    case 'list_dir':
      return 'read';
    case 'write_file':
    case 'edit_file':
      return 'edit';
    case 'glob':
    case 'grep':
      return 'search';
    default:
      return 'other';
  }
}

/** Control characters shown as escapes, so a title is one honest line. */
export function escapeControls(text: string): string {
  return text.replace(/[\u0000-\u001f\u007f-\u009f\u2028\u2029]/g, (c) =>
    c === '\n' ? '\\n' : c === '\t' ? '\\t' : c === '\r' ? '\\r' : `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`,
  );
}

function argString(args: unknown, key: string): string | undefined {
  if (typeof args !== 'object' || args === null) return undefined;
  const v = (args as Record<string, unknown>)[key];
  return typeof v === 'string' ? v : undefined;
}

/** A call's title: the whole command of a shell call, the path of a file tool, else the tool's name. */
export function toolTitle(tool: string, args: unknown): string {
  const command = tool === 'shell' ? argString(args, 'command') : undefined;
  if (command !== undefined) return escapeControls(command);
  const path = argString(args, 'path') ?? argString(args, 'pattern');
  return escapeControls(path !== undefined ? `${tool} ${path}` : tool);
}

/** File tools name the file they touch (absolute, under the session's cwd). */
export function toolLocations(tool: string, args: unknown, cwd: string): acp.ToolCallLocation[] {
  if (!['read_file', 'list_dir', 'write_file', 'edit_file'].includes(tool)) return [];
  const path = argString(args, 'path');
  if (path === undefined) return [];
  return [{ path: path.startsWith('/') ? path : `${cwd.replace(/\/$/, '')}/${path}` }];
}

export function toolCall(m: ToolCallBeginMsg | ExecApprovalRequestMsg, cwd: string, status: acp.ToolCallStatus): acp.ToolCall {
  return {
    toolCallId: m.call_id,
    title: toolTitle(m.tool, m.arguments),
    kind: toolKind(m.tool),
    status,
    rawInput: m.arguments,
    locations: toolLocations(m.tool, m.arguments, cwd),
  };
}

export function textContent(text: string): acp.ToolCallContent[] {
  return [{ type: 'content', content: { type: 'text', text } }];
}

/** The end of a call: completed, or failed (denied and interrupted calls say why). */
export function toolCallEnd(m: ToolCallEndMsg): acp.ToolCallUpdate {
  const output = typeof m.output === 'string' ? m.output : JSON.stringify(m.output);
  const reason = m.status === 'denied' ? 'denied: ' : m.status === 'interrupted' ? 'interrupted: ' : '';
  return {
    toolCallId: m.call_id,
    status: m.status === 'ok' ? 'completed' : 'failed',
    content: textContent(reason + output),
    rawOutput: { status: m.status, output: m.output, ...(m.exit_code !== undefined && { exit_code: m.exit_code }) },
  };
}

/**
 * The four options, in agentd's decision order. `approve_for_session` is labelled as every
 * frontend labels it: on a shell call it approves that exact command (docs/tools.md).
 */
export function permissionOptions(tool: string): acp.PermissionOption[] {
  return [
    { optionId: 'approve', name: 'Allow once', kind: 'allow_once' },
    { optionId: 'approve_for_session', name: approveForSessionLabel(tool), kind: 'allow_always' },
    { optionId: 'deny', name: 'Deny', kind: 'reject_once' },
    { optionId: 'abort', name: 'Deny and stop the turn', kind: 'reject_always' },
  ];
}

export type Decision = ApprovalDecision;

/** The decision an option stands for (its id is the decision), or null when cancelled / unknown. */
export function decisionOf(outcome: acp.RequestPermissionOutcome): Decision | null {
  if (outcome.outcome !== 'selected') return null;
  const parsed = ApprovalDecisionSchema.safeParse(outcome.optionId);
  return parsed.success ? parsed.data : null;
}

/** A problem with a prompt's content (answered as invalid params). */
export class PromptContentError extends Error {}

/**
 * Prompt blocks → one message: text joined in order, a resource link as its URI, an
 * embedded text resource as a fenced block headed by its URI. Images, audio and binary
 * resources are refused.
 */
export function promptText(blocks: readonly acp.ContentBlock[]): string {
  const parts: string[] = [];
  for (const b of blocks) {
    if (b.type === 'text') parts.push(b.text);
    else if (b.type === 'resource_link') parts.push(b.uri);
    else if (b.type === 'resource' && 'text' in b.resource) parts.push(`${b.resource.uri}\n\`\`\`\n${b.resource.text}\n\`\`\``);
    else throw new PromptContentError(`agentd takes text, resource links and embedded text resources; not ${b.type === 'resource' ? 'binary resources' : b.type}`);
  }
  return parts.join('\n');
}

/** How a turn's end answers its prompt: a stop reason, or a failure (code, message). */
export function stopReason(m: TurnEndMsg): { stop: acp.StopReason } | { failed: { code: string; message: string } } {
  switch (m.type) {
    case 'turn_complete':
      return { stop: (m as { stop_reason?: string }).stop_reason === 'length' ? 'max_tokens' : 'end_turn' };
    case 'turn_interrupted':
      return { stop: 'cancelled' };
    case 'turn_failed':
      return m.error.code === 'max_model_steps_exceeded' ? { stop: 'max_turn_requests' } : { failed: m.error };
  }
}
