/**
 * Display layout: transcript items → styled terminal rows for a given width. Pure;
 * results are memoised per (item object, width), so streaming one item re-lays only it.
 */
import type { UserMessageMode } from '../../protocol/index.js';
import type { Item, LocalNote, ReasoningItem, ToolItem, TurnEndItem } from './items.js';
import { formatDuration, turnSummary } from '../render/format.js';
import { sanitize } from '../render/sanitize.js';
import { lineWidth, seg, wrap, type Line, type Seg } from './text.js';
import { theme } from './theme.js';
import { describeCall } from '../render/tool-call.js';
import { diffLineKind, editPreview } from '../render/diff.js';

/** Tool output rows shown per call (the tail). */
export const TOOL_OUTPUT_ROWS = 12;

const cache = new WeakMap<object, { width: number; lines: Line[] }>();

function memo(item: object, width: number, make: () => Line[]): Line[] {
  const hit = cache.get(item);
  if (hit && hit.width === width) return hit.lines;
  const lines = make();
  cache.set(item, { width, lines });
  return lines;
}

/** Finished thinking shows this many rows unless expanded (`/thinking`). */
export const REASONING_COLLAPSED_ROWS = 1;

/** Rows of a whole transcript: items and local notes merged by sequence, one blank row between blocks. */
export function layoutTranscript(items: readonly Item[], notes: readonly LocalNote[], width: number, showReasoning = false): Line[] {
  const out: Line[] = [];
  const w = Math.max(10, width);
  let n = 0;
  const emit = (lines: Line[]) => {
    if (out.length > 0) out.push([]);
    for (const l of lines) out.push(l);
  };
  for (const item of items) {
    while (n < notes.length && notes[n]!.afterSeq < item.seq) emit(layoutNote(notes[n++]!, w));
    emit(item.kind === 'reasoning' ? layoutReasoning(item, w, showReasoning) : layoutItem(item, w));
  }
  while (n < notes.length) emit(layoutNote(notes[n++]!, w));
  return out;
}

export function layoutNote(note: LocalNote, width: number): Line[] {
  return memo(note, width, () => noticeLines(note.tone, note.text, note.detail, width));
}

export function layoutItem(item: Item, width: number): Line[] {
  return memo(item, width, () => {
    switch (item.kind) {
      case 'user':
        return userLines(item.text, item.mode, width);
      case 'agent':
        return agentLines(item.text, item.streaming, width);
      case 'tool':
        return toolLines(item, width);
      case 'turn_end':
        return turnEndLines(item, width);
      case 'notice':
        return noticeLines(item.tone, item.text, item.detail, width);
      case 'reasoning':
        return reasoningLines(item, width, false);
    }
  });
}

const expandedCache = new WeakMap<object, { width: number; lines: Line[] }>();

/** Thinking, dimmed: whole while it streams or when expanded, else its first row and a count. */
export function layoutReasoning(item: ReasoningItem, width: number, expanded: boolean): Line[] {
  if (!expanded) return layoutItem(item, width);
  const hit = expandedCache.get(item);
  if (hit && hit.width === width) return hit.lines;
  const lines = reasoningLines(item, width, true);
  expandedCache.set(item, { width, lines });
  return lines;
}

function reasoningLines(item: ReasoningItem, width: number, expanded: boolean): Line[] {
  const style = { color: theme.muted, dim: true, italic: true };
  const rows = wrap([seg(sanitize(item.text.trim()), style)], width, { first: [seg('✻ ', { color: theme.muted })], rest: [seg('  ')] });
  if (item.streaming || expanded || rows.length <= REASONING_COLLAPSED_ROWS) return rows;
  const hidden = rows.length - REASONING_COLLAPSED_ROWS;
  return [...rows.slice(0, REASONING_COLLAPSED_ROWS), [seg(`  … ${hidden} more line${hidden === 1 ? '' : 's'} of thinking · /thinking to show`, { color: theme.muted, dim: true })]];
}

function userLines(text: string, mode: UserMessageMode, width: number): Line[] {
  const body: Seg[] = [seg(sanitize(text), { color: theme.user, bold: true })];
  if (mode !== 'turn') body.push(seg(`  (${mode})`, { color: theme.muted, italic: true }));
  return wrap(body, width, { first: [seg('› ', { color: theme.accent, bold: true })], rest: [seg('  ')] });
}

/** Light markdown: ``` fences, `inline code`, **bold**, # headings. */
export function markdownSegs(text: string): Seg[] {
  const out: Seg[] = [];
  let inFence = false;
  const lines = sanitize(text).split('\n');
  lines.forEach((line, i) => {
    const nl = i < lines.length - 1 ? '\n' : '';
    if (/^\s*```/.test(line)) {
      inFence = !inFence;
      out.push(seg(line + nl, { color: theme.muted }));
      return;
    }
    if (inFence) {
      out.push(seg(line + nl, { color: theme.code }));
      return;
    }
    const h = /^(#{1,6})\s+(.*)$/.exec(line);
    if (h) {
      out.push(seg(h[2]! + nl, { bold: true, color: theme.heading }));
      return;
    }
    const re = /(`[^`]+`|\*\*[^*]+\*\*)/g;
    let last = 0;
    for (let m = re.exec(line); m; m = re.exec(line)) {
      if (m.index > last) out.push(seg(line.slice(last, m.index)));
      const tok = m[0];
      if (tok.startsWith('`')) out.push(seg(tok.slice(1, -1), { color: theme.code }));
      else out.push(seg(tok.slice(2, -2), { bold: true }));
      last = m.index + tok.length;
    }
    out.push(seg(line.slice(last) + nl));
  });
  return out;
}

function agentLines(text: string, streaming: boolean, width: number): Line[] {
  const body = markdownSegs(text);
  if (streaming) body.push(seg(' ▍', { color: theme.agent }));
  return wrap(body, width, { first: [seg('● ', { color: theme.agent })], rest: [seg('  ')] });
}

const STATUS_GLYPH: Record<ToolItem['status'], { glyph: string; color: string }> = {
  awaiting_approval: { glyph: '⏸', color: theme.warning },
  running: { glyph: '●', color: theme.warning },
  ok: { glyph: '●', color: theme.success },
  error: { glyph: '●', color: theme.error },
  denied: { glyph: '⊘', color: theme.muted },
  interrupted: { glyph: '■', color: theme.warning },
};

const DIFF_COLOR = { add: theme.success, del: theme.error, hunk: theme.code, meta: theme.muted, ctx: theme.output } as const;

/** An edit_file call's rows: its result's diff, coloured; before it ran, the change it proposes. */
function diffRows(item: ToolItem, width: number): Line[] {
  const gutter = [seg('  │ ', { color: theme.border })];
  const text = item.output.map((c) => c.text).join('') || editPreview(item.args);
  const rows: Line[] = [];
  for (const line of sanitize(text).replace(/\n$/, '').split('\n')) {
    if (line === '') continue;
    rows.push(...wrap([seg(line, { color: DIFF_COLOR[diffLineKind(line)] })], width, { first: gutter, rest: gutter }));
  }
  return rows;
}

/** Every kept row of a call's output (the transcript shows the last TOOL_OUTPUT_ROWS; the Ctrl-O pager all). */
export function outputRows(item: ToolItem, width: number): Line[] {
  if (item.tool === 'edit_file') return diffRows(item, width);
  const rows: Line[] = [];
  const gutter = [seg('  │ ', { color: theme.border })];
  for (const chunk of item.output) {
    let text = sanitize(chunk.text);
    if (text.endsWith('\n')) text = text.slice(0, -1);
    if (text === '') continue;
    const style = chunk.stream === 'stderr' ? { color: theme.stderr } : { color: theme.output };
    rows.push(...wrap([seg(text, style)], width, { first: gutter, rest: gutter }));
  }
  return rows;
}

/** A delegate call's child: its session (open it with /attach) and what it is doing. */
function subagentLines(sub: NonNullable<ToolItem['subagent']>, width: number): Line[] {
  const tone = sub.status === 'running' ? theme.muted : sub.status === 'complete' ? theme.success : theme.error;
  const lines = wrap(
    [seg('subagent ', { color: theme.muted }), seg(sub.sessionId, { bold: true }), seg(` · ${sub.status}`, { color: tone })],
    width,
    { first: [seg('  ↳ ', { color: theme.border })], rest: [seg('    ')] },
  );
  if (sub.progress) {
    lines.push(...wrap([seg(sanitize(sub.progress), { color: theme.text, italic: true })], width, { first: [seg('    ')], rest: [seg('    ')] }));
  }
  return lines;
}

function toolLines(item: ToolItem, width: number): Line[] {
  const { glyph, color } = STATUS_GLYPH[item.status];
  const desc = describeCall(item.tool, item.args);
  const isShell = item.tool === 'shell';
  const head: Seg[] = isShell
    ? [seg('$ ', { color: theme.muted }), seg(sanitize(desc), { color: theme.command, bold: true })]
    : [seg(item.tool, { bold: true }), seg(desc ? ` ${sanitize(desc)}` : '', { color: theme.command })];
  const lines = wrap(head, width, { first: [seg(`${glyph} `, { color })], rest: [seg('  ')] });
  if (item.subagent) lines.push(...subagentLines(item.subagent, width));

  const out = outputRows(item, width);
  const hidden = out.length - TOOL_OUTPUT_ROWS;
  if (hidden > 0 || item.truncated > 0) {
    const more = hidden > 0 ? `${hidden} more line${hidden === 1 ? '' : 's'}` : 'earlier output';
    lines.push([seg('  │ ', { color: theme.border }), seg(`… ${more} above · ctrl-o to see all`, { color: theme.muted, italic: true })]);
  }
  lines.push(...out.slice(Math.max(0, hidden)));

  const foot: Seg[] = [];
  const dur = item.durationMs !== null ? ` · ${formatDuration(item.durationMs)}` : '';
  switch (item.status) {
    case 'awaiting_approval':
      foot.push(seg('waiting for approval', { color: theme.warning, bold: true }));
      if (item.cwd) foot.push(seg(` · in ${item.cwd}`, { color: theme.muted }));
      break;
    case 'running':
      foot.push(seg('running…', { color: theme.muted, italic: true }));
      break;
    case 'ok':
      foot.push(seg(item.exitCode !== null ? `exit ${item.exitCode}` : 'done', { color: theme.success }));
      foot.push(seg(dur, { color: theme.muted }));
      break;
    case 'error':
      foot.push(seg(item.exitCode !== null ? `exit ${item.exitCode}` : 'error', { color: theme.error, bold: true }));
      foot.push(seg(dur, { color: theme.muted }));
      break;
    case 'denied':
      foot.push(seg('denied', { color: theme.muted, bold: true }));
      break;
    case 'interrupted':
      foot.push(seg('interrupted', { color: theme.warning }));
      foot.push(seg(dur, { color: theme.muted }));
      break;
  }
  if (item.approval === 'approve') foot.push(seg(' · approved', { color: theme.muted }));
  if (item.approval === 'approve_for_session') foot.push(seg(' · approved for session', { color: theme.muted }));
  if (item.approval === 'abort') foot.push(seg(' · aborted', { color: theme.muted }));
  lines.push(...wrap(foot, width, { first: [seg('  └ ', { color: theme.border })], rest: [seg('    ')] }));
  return lines;
}

function turnEndLines(item: TurnEndItem, width: number): Line[] {
  let label: string;
  let color: string;
  if (item.outcome === 'complete') {
    label = turnSummary(item.durationMs, item.toolCalls, item.tokens);
    color = theme.muted;
  } else if (item.outcome === 'interrupted') {
    label = item.reason && item.reason !== 'interrupted' ? `interrupted — ${item.reason}` : 'interrupted';
    color = theme.warning;
  } else {
    label = `turn failed — ${item.reason ?? 'unknown error'}`;
    color = theme.error;
  }
  const text = `── ${sanitize(label)} `;
  const rows = wrap([seg(text, { color })], width);
  const last = rows[rows.length - 1]!;
  const used = lineWidth(last);
  if (used < width) last.push(seg('─'.repeat(Math.min(width - used, 60 - Math.min(used, 60))), { color: theme.border }));
  return rows;
}

const TONE: Record<LocalNote['tone'], { glyph: string; color: string }> = {
  info: { glyph: '◇', color: theme.muted },
  success: { glyph: '✓', color: theme.success },
  warning: { glyph: '⚠', color: theme.warning },
  error: { glyph: '✗', color: theme.error },
};

function noticeLines(tone: LocalNote['tone'], text: string, detail: string | undefined, width: number): Line[] {
  const t = TONE[tone];
  const body: Seg[] = [seg(sanitize(text), { color: tone === 'info' ? theme.text : t.color })];
  const lines = wrap(body, width, { first: [seg(`${t.glyph} `, { color: t.color })], rest: [seg('  ')] });
  if (detail) {
    lines.push(...wrap([seg(sanitize(detail), { color: theme.muted })], width, { first: [seg('  ')], rest: [seg('  ')] }));
  }
  return lines;
}
