/**
 * The Ctrl-O pager: one tool call's whole kept output, full screen, scrollable (↑/↓,
 * PgUp/PgDn, Home/End), ←/→ to the previous / next call, q or Esc to go back. The
 * transcript shows only the tail of a call's output (layout.ts TOOL_OUTPUT_ROWS).
 */
import type { Key } from 'ink';
import type { Item, ToolItem } from './items.js';
import { outputRows } from './layout.js';
import { Rows } from './rows.js';
import { seg, truncateLine, type Line } from './text.js';
import { theme } from './theme.js';
import { describeCall } from '../render/tool-call.js';
import { sanitize } from '../render/sanitize.js';

export interface PagerState {
  /** The call shown; null = the pager is closed. */
  callId: string | null;
  /** First visible output row. */
  top: number;
}

export const closedPager: PagerState = { callId: null, top: 0 };

export function toolCalls(items: readonly Item[]): ToolItem[] {
  return items.filter((i): i is ToolItem => i.kind === 'tool');
}

/** The header row and the output rows of a call, for a width. */
export function pagerLines(item: ToolItem, width: number): { header: Line; body: Line[] } {
  const desc = sanitize(describeCall(item.tool, item.args));
  const title = item.tool === 'shell' ? `$ ${desc}` : `${item.tool}${desc ? ` ${desc}` : ''}`;
  const body: Line[] = [];
  if (item.truncated > 0) {
    body.push([seg(`  … ${item.truncated} earlier characters not kept (the TUI keeps the last 64 KiB of a call)`, { color: theme.muted, italic: true })]);
  }
  body.push(...outputRows(item, width));
  if (body.length === 0) body.push([seg('  (no output)', { color: theme.muted, italic: true })]);
  const count = `${body.length} row${body.length === 1 ? '' : 's'}`;
  const header = truncateLine(
    [seg(' output of ', { color: theme.muted }), seg(title, { color: theme.command, bold: true }), seg(` · ${count}`, { color: theme.muted })],
    width,
  );
  return { header, body };
}

export const PAGER_HINT = '↑↓ pgup/pgdn scroll · ←→ other calls · q/esc back';

/** Rows of the pager view: a header, `height - 1` rows of output from `top` (clamped). */
export function pagerView(item: ToolItem, width: number, height: number, top: number): Line[] {
  const { header, body } = pagerLines(item, width);
  const h = Math.max(1, height - 1);
  const start = clampTop(top, body.length, h);
  const rows = body.slice(start, start + h);
  while (rows.length < h) rows.push([]);
  return [header, ...rows];
}

function clampTop(top: number, total: number, height: number): number {
  return Math.max(0, Math.min(top, total - height));
}

export function Pager({ item, width, height, top }: { item: ToolItem; width: number; height: number; top: number }) {
  return <Rows lines={pagerView(item, width, height, top)} />;
}

export interface PagerKeys {
  state: PagerState;
  setState: (s: PagerState) => void;
  items: readonly Item[];
  width: number;
  height: number;
  /** No tool call to show. */
  onEmpty: () => void;
}

/** Ctrl-O: open on the latest call (or close). */
export function togglePager(p: PagerKeys): void {
  if (p.state.callId !== null) return p.setState(closedPager);
  const last = toolCalls(p.items).at(-1);
  if (!last) return p.onEmpty();
  p.setState({ callId: last.callId, top: 0 });
}

/** A key while the pager is open. */
export function pagerKey(ch: string, key: Key, p: PagerKeys): void {
  const calls = toolCalls(p.items);
  const index = calls.findIndex((c) => c.callId === p.state.callId);
  const item = calls[index];
  if (!item || key.escape || ch === 'q') return p.setState(closedPager);
  const total = pagerLines(item, p.width).body.length;
  const h = Math.max(1, p.height - 1);
  const page = Math.max(1, h - 1);
  const top = clampTop(p.state.top, total, h);
  const to = (t: number) => p.setState({ callId: item.callId, top: clampTop(t, total, h) });
  if (key.upArrow || ch === 'k') to(top - 1);
  else if (key.downArrow || ch === 'j') to(top + 1);
  else if (key.pageUp || ch === 'b') to(top - page);
  else if (key.pageDown || ch === ' ') to(top + page);
  else if (key.home || ch === 'g') to(0);
  else if (key.end || ch === 'G') to(total);
  else if (key.leftArrow && index > 0) p.setState({ callId: calls[index - 1]!.callId, top: 0 });
  else if (key.rightArrow && index < calls.length - 1) p.setState({ callId: calls[index + 1]!.callId, top: 0 });
}
