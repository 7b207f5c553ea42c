/** `agentd sessions` output: the plain-text table of sessions (no colours; stable for scripts that grep it). */
import type { SessionDescriptor } from '../../protocol/index.js';
import { relativeTime } from './format.js';
import { sanitizeLine } from './sanitize.js';

const STATUS_LABEL: Record<SessionDescriptor['status'], string> = {
  idle: 'idle',
  running: 'running',
  awaiting_approval: 'approval',
};

/**
 * One row per session. Titles, routes and working directories come from clients and are
 * printed through `sanitizeLine` (no escape sequences, control characters or line breaks).
 */
export function formatSessionsTable(sessions: readonly SessionDescriptor[], now = Date.now()): string {
  if (sessions.length === 0) return 'no sessions (start one with "agentd attach --new")\n';
  const rows = sessions.map((s) => [
    s.session_id,
    STATUS_LABEL[s.status],
    sanitizeLine(s.model.route),
    relativeTime(s.updated_at, now),
    String(s.head_sequence),
    sanitizeLine(s.title ?? ''),
    sanitizeLine(s.cwd),
  ]);
  const head = ['SESSION', 'STATUS', 'MODEL', 'UPDATED', 'BATCHES', 'TITLE', 'CWD'];
  const widths = head.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i]!.length)));
  const fmt = (r: string[]) =>
    r
      .map((c, i) => (i === r.length - 1 ? c : c.padEnd(widths[i]!)))
      .join('  ')
      .trimEnd();
  return [fmt(head), ...rows.map(fmt)].join('\n') + '\n';
}
