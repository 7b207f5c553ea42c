/** The results table printed at the end of a run. */
import type { Goal, Measurement } from './scenario.js';

export interface Row {
  name: string;
  goal: Goal;
  m: Measurement | null;
  pass: boolean;
  error?: string;
  /** Why the scenario did not run here (not a failure). */
  skipped?: string;
}

const useColor = process.stdout.isTTY && !process.env.NO_COLOR;
const paint = (code: number) => (s: string) => (useColor ? `\x1b[${code}m${s}\x1b[0m` : s);
export const green = paint(32);
export const red = paint(31);
export const dim = paint(2);
export const bold = paint(1);

/** 1234567.8 → "1,234,568"; 12.345 → "12.3"; 0.1234 → "0.123". */
export function fmt(n: number | null): string {
  if (n === null || !Number.isFinite(n)) return '—';
  const abs = Math.abs(n);
  if (abs >= 1000) return Math.round(n).toLocaleString('en-US');
  if (abs >= 100) return n.toFixed(0);
  if (abs >= 10) return n.toFixed(1);
  if (abs >= 1) return n.toFixed(2);
  return n.toFixed(3);
}

function visibleLength(s: string): number {
  return [...s.replace(/\x1b\[[0-9;]*m/g, '')].length;
}

function pad(s: string, width: number, right = false): string {
  const fill = ' '.repeat(Math.max(0, width - visibleLength(s)));
  return right ? fill + s : s + fill;
}

export function renderTable(rows: Row[]): string {
  const header = ['scenario', 'agentd', 'baseline', 'ratio', 'goal', ''];
  const cells = rows.map((r) => {
    if (r.skipped !== undefined) return [r.name, dim('skipped'), '', '', r.goal.text, dim('–')];
    if (!r.m) return [r.name, red('failed'), '', '', r.goal.text, red('✗')];
    const unit = r.m.unit;
    return [
      r.name,
      `${fmt(r.m.value)} ${unit}`,
      r.m.baseline === null ? '—' : `${fmt(r.m.baseline)} ${unit}`,
      fmt(r.m.ratio),
      r.goal.text,
      r.pass ? green('✓') : red('✗'),
    ];
  });
  const rightAligned = [false, true, true, true, false, false];
  const widths = header.map((h, i) => Math.max(visibleLength(h), ...cells.map((c) => visibleLength(c[i]!))));
  const line = (c: string[]) => c.map((s, i) => pad(s, widths[i]!, rightAligned[i])).join('  ').trimEnd();
  const sep = widths.map((w) => '─'.repeat(w)).join('  ');
  const out = [bold(line(header)), dim(sep), ...cells.map(line)];
  const notes = rows
    .filter((r) => r.m?.note || r.error || r.skipped)
    .map((r) => `  ${r.name}: ${r.skipped !== undefined ? `skipped: ${r.skipped}` : r.error ? red(r.error) : r.m!.note}`);
  if (notes.length) out.push('', dim('notes:'), ...notes.map(dim));
  return out.join('\n');
}

/** The same table as Markdown (for docs/performance.md). */
export function renderMarkdown(rows: Row[]): string {
  const out = ['| scenario | agentd | baseline | ratio | goal | |', '|---|---:|---:|---:|---|---|'];
  for (const r of rows) {
    if (r.skipped !== undefined) {
      out.push(`| ${r.name} | skipped | | | ${r.goal.text} | – |`);
      continue;
    }
    if (!r.m) {
      out.push(`| ${r.name} | failed | | | ${r.goal.text} | ✗ |`);
      continue;
    }
    const u = r.m.unit;
    const base = r.m.baseline === null ? '—' : `${fmt(r.m.baseline)} ${u}`;
    out.push(`| ${r.name} | ${fmt(r.m.value)} ${u} | ${base} | ${fmt(r.m.ratio)} | ${r.goal.text} | ${r.pass ? '✓' : '✗'} |`);
  }
  return out.join('\n');
}
