/** Compact human formats shared by the TUI and the scripting commands: durations, ages, counts. */

/** Compact human durations: 850ms, 3.2s, 1m05s. */
export function formatDuration(ms: number): string {
  if (ms < 1000) return `${Math.round(ms)}ms`;
  if (ms < 60_000) return `${(ms / 1000).toFixed(ms < 10_000 ? 1 : 0)}s`;
  const m = Math.floor(ms / 60_000);
  const s = Math.floor((ms % 60_000) / 1000);
  if (m < 60) return `${m}m${String(s).padStart(2, '0')}s`;
  return `${Math.floor(m / 60)}h${String(m % 60).padStart(2, '0')}m`;
}

/** How long ago `ms` was: 12s ago, 5m ago, 3h ago, 2d ago. */
export function relativeTime(ms: number, now = Date.now()): string {
  const d = Math.max(0, now - ms);
  if (d < 60_000) return `${Math.floor(d / 1000)}s ago`;
  if (d < 3_600_000) return `${Math.floor(d / 60_000)}m ago`;
  if (d < 86_400_000) return `${Math.floor(d / 3_600_000)}h ago`;
  return `${Math.floor(d / 86_400_000)}d ago`;
}

/** Compact counts: 950, 1.2k, 34k, 1.5M. */
export function formatCount(n: number): string {
  if (n < 1000) return String(n);
  if (n < 10_000) return `${(n / 1000).toFixed(1)}k`;
  if (n < 1_000_000) return `${Math.round(n / 1000)}k`;
  return `${(n / 1_000_000).toFixed(1)}M`;
}

/** A finished turn in a few words: `done in 3.2s · 2 tool calls · 1.2k tokens`. */
export function turnSummary(durationMs: number | null, toolCalls: number | null, tokens: number | null): string {
  const parts = [`done${durationMs !== null ? ` in ${formatDuration(durationMs)}` : ''}`];
  if (toolCalls) parts.push(`${toolCalls} tool call${toolCalls === 1 ? '' : 's'}`);
  if (tokens) parts.push(`${formatCount(tokens)} tokens`);
  return parts.join(' · ');
}
