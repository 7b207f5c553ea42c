/**
 * Labels every frontend shows for wire values whose meaning depends on the call (no zod
 * here: the web bundle imports this file).
 */

/**
 * What `approve_for_session` approves (docs/tools.md): on a `shell` call that exact command
 * (whatever its other arguments), on another tool identical arguments.
 */
export function approveForSessionLabel(tool: string): string {
  return tool === 'shell' ? 'Approve this command for the session' : 'Approve for session';
}
