/** Small text formatters of the browser UI (labels, times, token counts). */
import type { SessionDescriptor } from '../wire';

export function statusLabel(status: SessionDescriptor['status']): string {
  return status === 'awaiting_approval' ? 'awaiting approval' : status;
}

/** "just now", "5 min ago", "3 h ago", else the date. */
export function relTime(ms: number, now = Date.now()): string {
  const s = Math.max(0, Math.round((now - ms) / 1000));
  if (s < 45) return 'just now';
  if (s < 3600) return `${Math.round(s / 60)} min ago`;
  if (s < 86_400) return `${Math.round(s / 3600)} h ago`;
  return new Date(ms).toLocaleDateString();
}

/** 1234 → "1.2k", 1234567 → "1.2M". */
export function tokens(n: number): string {
  if (n < 1000) return String(n);
  if (n < 1_000_000) return `${(n / 1000).toFixed(n < 10_000 ? 1 : 0)}k`;
  return `${(n / 1_000_000).toFixed(1)}M`;
}

/** A tool call's arguments in one line: a shell command as is, else compact JSON. */
export function argsLine(args: unknown): string {
  if (args && typeof args === 'object' && 'command' in args && typeof (args as { command: unknown }).command === 'string') {
    return (args as { command: string }).command;
  }
  if (args && typeof args === 'object' && 'path' in args && typeof (args as { path: unknown }).path === 'string') {
    return (args as { path: string }).path;
  }
  return JSON.stringify(args) ?? '';
}
