/**
 * The bottom status line: the state (with a spinner while working) on the left; model,
 * session, token usage and status on the right. Parts are dropped, least important
 * first, to fit narrow terminals.
 */
import { Box } from 'ink';
import { useEffect, useState } from 'react';
import type { ClientState } from '../client/events.js';
import { Row } from './rows.js';
import { sessionInfoStatus, type SessionInfo } from './session-info.js';
import { formatCount, formatDuration } from '../render/format.js';
import { lineWidth, seg, truncateLine, type Line } from './text.js';
import { theme } from './theme.js';

export const SPINNER = ['⠋', '⠙', '⠹', '⠸', '⠼', '⠴', '⠦', '⠧', '⠇', '⠏'];

export interface StatusLineProps {
  info: SessionInfo;
  conn: ClientState;
  width: number;
  /** An interrupt is on its way. */
  interrupting?: boolean;
  /** Ctrl-C was pressed once. */
  ctrlCArmed?: boolean;
  /** Override the clock (tests). */
  now?: number;
  /** Spinner frame override (tests). */
  frame?: number;
  /** Replaces the idle hint. */
  hint?: string | undefined;
}

/** Re-render every `ms` while active. */
export function useTicker(active: boolean, ms = 100): number {
  const [tick, setTick] = useState(0);
  useEffect(() => {
    if (!active) return;
    const t = setInterval(() => setTick((n) => n + 1), ms);
    return () => clearInterval(t);
  }, [active, ms]);
  return tick;
}

/** The left part: what is happening now. `short` drops the explanations. */
export function statusLeft(props: StatusLineProps, frame: string, now: number, short: boolean): Line {
  const { info, conn } = props;
  const status = sessionInfoStatus(info);
  if (props.ctrlCArmed) {
    return [seg(short ? 'Ctrl-C again to detach' : 'press Ctrl-C again to detach (the session keeps running)', { color: theme.warning })];
  }
  if (conn.kind === 'reconnecting') {
    const secs = Math.max(0, Math.ceil((conn.retryAt - now) / 1000));
    return [
      seg(`${frame} reconnecting${secs > 0 ? ` in ${secs}s` : '…'}`, { color: theme.warning }),
      seg(short ? '' : ` (attempt ${conn.attempt})`, { color: theme.muted }),
    ];
  }
  if (conn.kind === 'closed') return [seg(`✗ disconnected${conn.error && !short ? `: ${conn.error}` : ''}`, { color: theme.error })];
  if (conn.kind === 'connecting' || conn.kind === 'idle') return [seg(`${frame} connecting…`, { color: theme.muted })];
  if (status === 'awaiting_approval') return [seg('⏸ waiting for your approval', { color: theme.warning, bold: true })];
  if (status === 'running') {
    const elapsed = info.turnStartedAt !== null ? ` ${formatDuration(Math.max(0, now - info.turnStartedAt))}` : '';
    return [
      seg(`${frame} ${props.interrupting ? 'interrupting…' : 'working'}`, { color: theme.accent }),
      seg(`${elapsed}${short ? '' : ' · esc to interrupt'}`, { color: theme.muted }),
    ];
  }
  return [seg(props.hint ?? (short ? '● ready' : '● ready · enter to send · /help for commands'), { color: theme.muted })];
}

/** The context gauge: `41k / 128k` (estimated tokens of the next call against the window); none without a window. */
export function contextGauge(info: SessionInfo): string | null {
  const c = info.context;
  if (!c || !c.window) return null;
  return `${formatCount(c.estimated)} / ${formatCount(c.window)}`;
}

/** The right parts in display order, each with a priority (lowest is dropped first when narrow). */
export function statusRight(info: SessionInfo): { text: string; priority: number }[] {
  const parts: { text: string; priority: number }[] = [];
  if (info.model) {
    const m = info.model;
    parts.push({ text: m.route === m.model || !m.model ? m.route : `${m.route} (${m.model})`, priority: 2 });
  }
  if (info.sessionId) parts.push({ text: info.sessionId, priority: 1 });
  if (info.usage) {
    parts.push({ text: `${formatCount(info.usage.input_tokens)} in / ${formatCount(info.usage.output_tokens)} out`, priority: 0 });
  }
  const gauge = contextGauge(info);
  if (gauge) parts.push({ text: gauge, priority: 2 });
  parts.push({ text: sessionInfoStatus(info).replace('_', ' '), priority: 3 });
  return parts;
}

export function StatusLine(props: StatusLineProps) {
  const { info, conn, width } = props;
  const status = sessionInfoStatus(info);
  const animate =
    props.frame === undefined && (status === 'running' || conn.kind === 'reconnecting' || conn.kind === 'connecting');
  const tick = useTicker(animate);
  const frame = SPINNER[(props.frame ?? tick) % SPINNER.length]!;
  const now = props.now ?? Date.now();
  const inner = Math.max(10, width - 2);

  let left = statusLeft(props, frame, now, false);
  let parts = statusRight(info);
  const rightText = () => parts.map((p) => p.text).join(' · ');
  const fits = () => lineWidth(left) + 2 + lineWidth([seg(rightText())]) <= inner;
  if (!fits()) left = statusLeft(props, frame, now, true);
  while (!fits() && parts.length > 1) {
    const lowest = Math.min(...parts.map((p) => p.priority));
    parts = parts.filter((p) => p.priority !== lowest);
  }
  const right = rightText();
  const gap = Math.max(1, inner - lineWidth(left) - lineWidth([seg(right)]));
  const line: Line = [...left, seg(' '.repeat(gap)), seg(right, { color: theme.muted })];
  return (
    <Box width={width} paddingX={1}>
      <Row line={truncateLine(line, inner)} />
    </Box>
  );
}
