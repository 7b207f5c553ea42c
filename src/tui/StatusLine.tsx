/** The bottom status line: state (with a spinner while working) on the left, model / session / tokens / connection on the right. */
import { Box, Text } from 'ink';
import { useEffect, useState, type ReactNode } from 'react';
import type { ClientState } from '../client/client.js';
import { formatCount, formatDuration } from './text.js';
import { theme } from './theme.js';
import { sessionStatus, type SessionInfo } from './transcript.js';

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
  hint?: string;
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

function shortId(id: string, width: number): string {
  const max = width >= 90 ? 40 : 14;
  return id.length > max ? `${id.slice(0, max - 1)}…` : id;
}

export function StatusLine(props: StatusLineProps) {
  const { info, conn, width } = props;
  const status = sessionStatus(info);
  const animate = props.frame === undefined && (status === 'running' || conn.kind === 'reconnecting' || conn.kind === 'connecting');
  const tick = useTicker(animate);
  const frame = SPINNER[(props.frame ?? tick) % SPINNER.length]!;
  const now = props.now ?? Date.now();

  let left: ReactNode;
  if (props.ctrlCArmed) {
    left = <Text color={theme.warning}>press Ctrl-C again to detach (the session keeps running)</Text>;
  } else if (conn.kind === 'reconnecting') {
    const secs = Math.max(0, Math.ceil((conn.retryAt - now) / 1000));
    left = (
      <Text color={theme.warning}>
        {frame} reconnecting{secs > 0 ? ` in ${secs}s` : '…'} <Text color={theme.muted}>(attempt {conn.attempt})</Text>
      </Text>
    );
  } else if (conn.kind === 'closed') {
    left = <Text color={theme.error}>✗ disconnected{conn.error ? `: ${conn.error}` : ''}</Text>;
  } else if (conn.kind === 'connecting' || conn.kind === 'idle') {
    left = <Text color={theme.muted}>{frame} connecting…</Text>;
  } else if (status === 'awaiting_approval') {
    left = <Text color={theme.warning} bold>⏸ waiting for your approval</Text>;
  } else if (status === 'running') {
    const elapsed = info.turnStartedAt !== null ? ` ${formatDuration(Math.max(0, now - info.turnStartedAt))}` : '';
    left = (
      <Text>
        <Text color={theme.accent}>{frame}</Text>
        <Text color={theme.accent}> {props.interrupting ? 'interrupting…' : 'working'}</Text>
        <Text color={theme.muted}>{elapsed} · esc to interrupt</Text>
      </Text>
    );
  } else {
    left = <Text color={theme.muted}>{props.hint ?? '● ready · enter to send · /help for commands'}</Text>;
  }

  const parts: string[] = [];
  if (info.model) parts.push(info.model.route === info.model.model || !info.model.model ? info.model.route : `${info.model.route} (${info.model.model})`);
  if (info.sessionId) parts.push(shortId(info.sessionId, width));
  if (info.usage) parts.push(`${formatCount(info.usage.input_tokens)} in / ${formatCount(info.usage.output_tokens)} out`);
  parts.push(status.replace('_', ' '));
  const right = parts.join(' · ');

  return (
    <Box width={width} flexDirection="row" justifyContent="space-between" paddingX={1}>
      <Box flexShrink={1} overflow="hidden">
        <Text wrap="truncate-end">{left}</Text>
      </Box>
      <Box flexShrink={0} marginLeft={2}>
        <Text color={theme.muted} wrap="truncate-start">
          {right}
        </Text>
      </Box>
    </Box>
  );
}
