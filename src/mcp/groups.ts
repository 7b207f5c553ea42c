/**
 * The process groups of the MCP stdio servers this process started (their supervisors'
 * pids), so the owner can end them all at shutdown even without a close(). Apart from
 * stdio.ts so that the shutdown path does not load the MCP SDK.
 */

/** Every live group; stdio.ts adds a group when it starts and removes it once it is gone. */
export const liveGroups = new Set<number>();

/** KILL every MCP server group still running (last resort at shutdown). */
export function killAllServerGroups(): void {
  for (const pgid of liveGroups) killGroup(pgid, 'SIGKILL');
  liveGroups.clear();
}

export function killGroup(pgid: number, signal: NodeJS.Signals): void {
  try {
    process.kill(-pgid, signal);
  } catch {
    /* gone */
  }
}
