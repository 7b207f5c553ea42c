/** The scrollable transcript viewport: exactly `height` rows of the laid-out transcript. */
import { Box } from 'ink';
import { Rows } from './rows.js';
import { seg, type Line } from './text.js';
import { theme } from './theme.js';

export interface TranscriptProps {
  /** All rows (banner included). */
  lines: readonly Line[];
  height: number;
  /** First visible row; null = follow the bottom. */
  scrollTop: number | null;
}

/** The first visible row for a scroll position, clamped. */
export function visibleTop(total: number, height: number, scrollTop: number | null): number {
  const maxTop = Math.max(0, total - height);
  if (scrollTop === null) return maxTop;
  return Math.max(0, Math.min(scrollTop, maxTop));
}

export function Transcript({ lines, height, scrollTop }: TranscriptProps) {
  const h = Math.max(1, height);
  const top = visibleTop(lines.length, h, scrollTop);
  const rows = lines.slice(top, top + h);
  // The marker takes the last row, so that row counts as hidden too.
  const below = lines.length - (top + rows.length) + 1;
  if (below > 1 && rows.length > 0) {
    rows[rows.length - 1] = [
      seg(`  ↓ ${below} more line${below === 1 ? '' : 's'} below · PgDn to scroll · Esc to jump back `, {
        color: theme.accent,
        inverse: true,
      }),
    ];
  }
  while (rows.length < h) rows.push([]);
  return (
    <Box flexDirection="column" height={h} overflow="hidden">
      <Rows lines={rows} />
    </Box>
  );
}

/** The row shown above the oldest loaded item. */
export function historyBanner(hasOlder: boolean, loading: boolean): Line {
  if (loading) return [seg('  ⟳ loading older history…', { color: theme.muted, italic: true })];
  if (hasOlder) return [seg('  ↑ older history — PgUp to load', { color: theme.muted, italic: true })];
  return [seg('  ─ start of session ─', { color: theme.muted })];
}
