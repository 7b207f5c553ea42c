/** One-line descriptions of a tool call's arguments, for the transcript and `agentd send`. */

/** The shell command of a tool call's arguments, or null for other tools. */
export function commandOf(args: unknown): string | null {
  if (typeof args === 'object' && args !== null && typeof (args as { command?: unknown }).command === 'string') {
    return (args as { command: string }).command;
  }
  if (typeof args === 'string') {
    try {
      return commandOf(JSON.parse(args));
    } catch {
      return null;
    }
  }
  return null;
}

/** One-line summary of a tool call: the command for shell, else `path`/compact JSON. */
export function describeCall(tool: string, args: unknown): string {
  const cmd = commandOf(args);
  if (cmd !== null) return cmd;
  if (typeof args === 'object' && args !== null) {
    const a = args as Record<string, unknown>;
    if (tool === 'delegate' && typeof a.task === 'string') return a.task;
    if (typeof a.path === 'string') {
      const extra = typeof a.content === 'string' ? ` (${a.content.length} chars)` : '';
      return `${a.path}${extra}`;
    }
    const json = JSON.stringify(args);
    return json === '{}' ? '' : json;
  }
  if (args === undefined || args === null) return '';
  return typeof args === 'string' ? args : JSON.stringify(args);
}
