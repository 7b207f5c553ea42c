/**
 * Bounds on model-supplied tool arguments (at most 1 MiB of JSON, 64 levels deep) and the
 * stable key of a tool call. Every walk over model data here is iterative: arguments
 * nested thousands of levels deep never overflow the stack.
 */
import type { ToolCallRequest } from '../model/types.js';

/** Largest tool-argument object accepted from a model, in UTF-8 bytes of JSON. */
export const MAX_TOOL_ARGUMENT_BYTES = 1024 * 1024;
/** Deepest nesting of objects/arrays accepted in tool arguments. */
export const MAX_TOOL_ARGUMENT_DEPTH = 64;

/** Why these arguments are refused (a message for the model), or null when they are fine. */
export function toolArgumentsProblem(args: unknown): string | null {
  const stack: Array<{ value: unknown; depth: number }> = [{ value: args, depth: 1 }];
  while (stack.length > 0) {
    const { value, depth } = stack.pop()!;
    if (value === null || typeof value !== 'object') continue;
    if (depth > MAX_TOOL_ARGUMENT_DEPTH) {
      return `the tool arguments are nested more than ${MAX_TOOL_ARGUMENT_DEPTH} levels deep; the call was not run`;
    }
    for (const child of Array.isArray(value) ? value : Object.values(value)) stack.push({ value: child, depth: depth + 1 });
  }
  // Depth is bounded now, so JSON.stringify cannot overflow the stack.
  const bytes = Buffer.byteLength(JSON.stringify(args) ?? '');
  if (bytes > MAX_TOOL_ARGUMENT_BYTES) {
    return `the tool arguments are ${bytes} bytes of JSON, more than the ${MAX_TOOL_ARGUMENT_BYTES} allowed; the call was not run`;
  }
  return null;
}

/** Stable key of a tool call for approve_for_session and doom-loop detection. */
export function callKey(call: Pick<ToolCallRequest, 'tool' | 'arguments'>): string {
  return `${call.tool}\u0000${stableStringify(call.arguments)}`;
}

/** JSON with object keys sorted, built with an explicit stack (no recursion). */
function stableStringify(root: unknown): string {
  const out: string[] = [];
  // Each task is either literal text to write or a value to serialize.
  const tasks: Array<{ text: string } | { value: unknown }> = [{ value: root }];
  while (tasks.length > 0) {
    const task = tasks.pop()!;
    if ('text' in task) {
      out.push(task.text);
      continue;
    }
    const value = task.value;
    if (Array.isArray(value)) {
      const parts: Array<{ text: string } | { value: unknown }> = [{ text: '[' }];
      value.forEach((v, i) => {
        if (i > 0) parts.push({ text: ',' });
        parts.push({ value: v });
      });
      parts.push({ text: ']' });
      for (let i = parts.length - 1; i >= 0; i--) tasks.push(parts[i]!);
    } else if (value && typeof value === 'object') {
      const keys = Object.keys(value).sort();
      const parts: Array<{ text: string } | { value: unknown }> = [{ text: '{' }];
      keys.forEach((k, i) => {
        parts.push({ text: `${i > 0 ? ',' : ''}${JSON.stringify(k)}:` });
        parts.push({ value: (value as Record<string, unknown>)[k] });
      });
      parts.push({ text: '}' });
      for (let i = parts.length - 1; i >= 0; i--) tasks.push(parts[i]!);
    } else {
      out.push(JSON.stringify(value) ?? 'null');
    }
  }
  return out.join('');
}
