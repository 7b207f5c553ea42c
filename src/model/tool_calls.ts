/**
 * Turning a tool call streamed in fragments (name, id, argument text) into a complete
 * ToolCallRequest, the same way for every provider: arguments must be a JSON object.
 */
import { randomUUID } from 'node:crypto';
import { ModelError, type ToolCallRequest } from './types.js';

/** A tool call while its fragments arrive. */
export interface PartialCall {
  id: string;
  name: string;
  args: string;
}

/**
 * The complete call, or null when it is unusable but the reply was cut off by its length
 * limit (`truncated`: the turn continues the reply, the cut call is dropped). Otherwise
 * an unusable call throws `ModelError('invalid_tool_arguments')`.
 */
export function completeCall(call: PartialCall, truncated: boolean): ToolCallRequest | null {
  const args = parseArguments(call.args);
  if (args === null || !call.name) {
    if (truncated) return null;
    const what = call.name ? `tool call "${call.name}" has arguments that are not a JSON object` : 'a tool call has no name';
    throw new ModelError('invalid_tool_arguments', `${what}: ${call.args.slice(0, 200)}`);
  }
  return { call_id: call.id || `call_${randomUUID()}`, tool: call.name, arguments: args };
}

/** Parses tool-call arguments; empty text is `{}`; anything but a JSON object is null. */
function parseArguments(text: string): Record<string, unknown> | null {
  if (text.trim() === '') return {};
  try {
    const value: unknown = JSON.parse(text);
    return value !== null && typeof value === 'object' && !Array.isArray(value) ? (value as Record<string, unknown>) : null;
  } catch {
    return null;
  }
}
