/**
 * Styled text for the TUI: segments, display width, sanitising untrusted text (tool
 * output may carry escape sequences) and word wrapping into terminal rows.
 */

/** A run of text with one style. Colours are Ink/chalk colour names or hex. */
export interface Seg {
  text: string;
  color?: string;
  bg?: string;
  bold?: boolean;
  dim?: boolean;
  italic?: boolean;
  inverse?: boolean;
  underline?: boolean;
}

/** One terminal row. */
export type Line = Seg[];

export type Style = Omit<Seg, 'text'>;

export const seg = (text: string, style: Style = {}): Seg => ({ text, ...style });

const segmenter = new Intl.Segmenter(undefined, { granularity: 'grapheme' });

function isWide(cp: number): boolean {
  return (
    (cp >= 0x1100 && cp <= 0x115f) ||
    (cp >= 0x2e80 && cp <= 0x303e) ||
    (cp >= 0x3041 && cp <= 0x33ff) ||
    (cp >= 0x3400 && cp <= 0x4dbf) ||
    (cp >= 0x4e00 && cp <= 0x9fff) ||
    (cp >= 0xa000 && cp <= 0xa4cf) ||
    (cp >= 0xac00 && cp <= 0xd7a3) ||
    (cp >= 0xf900 && cp <= 0xfaff) ||
    (cp >= 0xfe30 && cp <= 0xfe4f) ||
    (cp >= 0xff00 && cp <= 0xff60) ||
    (cp >= 0xffe0 && cp <= 0xffe6) ||
    (cp >= 0x1f300 && cp <= 0x1f64f) ||
    (cp >= 0x1f900 && cp <= 0x1f9ff) ||
    (cp >= 0x1fa70 && cp <= 0x1faff) ||
    (cp >= 0x20000 && cp <= 0x3fffd)
  );
}

function isZeroWidth(cp: number): boolean {
  return (
    (cp >= 0x0300 && cp <= 0x036f) ||
    (cp >= 0x200b && cp <= 0x200f) ||
    (cp >= 0xfe00 && cp <= 0xfe0f) ||
    cp === 0xfeff
  );
}

/** Display width of one grapheme cluster. */
export function graphemeWidth(g: string): number {
  const cp = g.codePointAt(0) ?? 0;
  if (cp < 0x20 || (cp >= 0x7f && cp < 0xa0)) return 0;
  if (isZeroWidth(cp)) return 0;
  if (isWide(cp)) return 2;
  // Emoji presentation selector makes a narrow symbol wide.
  if (g.includes('\uFE0F')) return 2;
  return 1;
}

/** Display width of a string (no escape sequences expected). */
export function textWidth(s: string): number {
  // Fast path for ASCII.
  if (/^[\x20-\x7e]*$/.test(s)) return s.length;
  let w = 0;
  for (const { segment } of segmenter.segment(s)) w += graphemeWidth(segment);
  return w;
}

export function lineWidth(line: Line): number {
  let w = 0;
  for (const s of line) w += textWidth(s.text);
  return w;
}

/** Split into grapheme clusters. */
export function graphemes(s: string): string[] {
  if (/^[\x20-\x7e]*$/.test(s)) return s.split('');
  return Array.from(segmenter.segment(s), (x) => x.segment);
}

// eslint-disable-next-line no-control-regex
const ANSI_RE = /\x1b(?:\[[0-?]*[ -/]*[@-~]|\][^\x07\x1b]*(?:\x07|\x1b\\)|[PX^_][^\x1b]*\x1b\\|[@-Z\\-_])/g;
// eslint-disable-next-line no-control-regex
const CONTROL_RE = /[\x00-\x08\x0b-\x1f\x7f-\x9f]/g;

/**
 * Make untrusted text safe to print: drop escape sequences and control characters,
 * normalise newlines, resolve carriage-return overwrites (progress bars keep their
 * last state) and expand tabs.
 */
export function sanitize(text: string): string {
  let s = text.replace(ANSI_RE, '').replace(/\r\n/g, '\n');
  if (s.includes('\r')) {
    s = s
      .split('\n')
      .map((l) => {
        const parts = l.split('\r');
        // The last non-empty overwrite wins.
        for (let i = parts.length - 1; i >= 0; i--) if (parts[i] !== '') return parts[i];
        return '';
      })
      .join('\n');
  }
  if (s.includes('\t')) {
    s = s
      .split('\n')
      .map((l) => {
        let out = '';
        for (const ch of l) {
          if (ch === '\t') out += ' '.repeat(4 - (out.length % 4));
          else out += ch;
        }
        return out;
      })
      .join('\n');
  }
  return s.replace(CONTROL_RE, '');
}

function sameStyle(a: Style, b: Style): boolean {
  return (
    a.color === b.color &&
    a.bg === b.bg &&
    a.bold === b.bold &&
    a.dim === b.dim &&
    a.italic === b.italic &&
    a.inverse === b.inverse &&
    a.underline === b.underline
  );
}

function styleOf(s: Seg): Style {
  const { text: _text, ...style } = s;
  return style;
}

/** Append text to a line, merging with the last segment when styles match. */
function push(line: Line, text: string, style: Style): void {
  if (text === '') return;
  const last = line[line.length - 1];
  if (last && sameStyle(styleOf(last), style)) last.text += text;
  else line.push({ text, ...style });
}

interface Token {
  text: string;
  style: Style;
  width: number;
  kind: 'word' | 'space' | 'newline';
}

function tokenize(segs: readonly Seg[]): Token[] {
  const out: Token[] = [];
  for (const s of segs) {
    const style = styleOf(s);
    for (const part of s.text.split(/(\n| +)/)) {
      if (part === '') continue;
      if (part === '\n') out.push({ text: part, style, width: 0, kind: 'newline' });
      else if (part[0] === ' ') out.push({ text: part, style, width: part.length, kind: 'space' });
      else out.push({ text: part, style, width: textWidth(part), kind: 'word' });
    }
  }
  return out;
}

export interface WrapOptions {
  /** Segments placed before the first row. */
  first?: Line;
  /** Segments placed before every following row (default: spaces as wide as `first`). */
  rest?: Line;
}

/**
 * Word-wrap styled text to rows of at most `width` columns. `\n` breaks a row; words
 * longer than a row are split; spaces at a soft break are dropped.
 */
export function wrap(segs: readonly Seg[], width: number, options: WrapOptions = {}): Line[] {
  const first = options.first ?? [];
  const rest = options.rest ?? (first.length ? [seg(' '.repeat(lineWidth(first)))] : []);
  const rows: Line[] = [];
  let row: Line = first.map((s) => ({ ...s }));
  let avail = Math.max(1, width - lineWidth(first));
  let used = 0;
  let softBroken = false;

  const newRow = (soft: boolean) => {
    rows.push(row);
    row = rest.map((s) => ({ ...s }));
    avail = Math.max(1, width - lineWidth(rest));
    used = 0;
    softBroken = soft;
  };

  // Spaces are held until a word follows on the same row, so soft-wrapped rows carry no
  // trailing blanks; held spaces are kept at a hard break and at the end (an input cursor
  // may be a styled space).
  let held: Token[] = [];
  const flushHeld = () => {
    for (const h of held) {
      push(row, h.text, h.style);
      used += h.width;
    }
    held = [];
  };
  const heldWidth = () => held.reduce((n, h) => n + h.width, 0);

  for (const tok of tokenize(segs)) {
    if (tok.kind === 'newline') {
      flushHeld();
      newRow(false);
      continue;
    }
    if (tok.kind === 'space') {
      if (used === 0 && softBroken && !tok.style.inverse) continue;
      if (used + heldWidth() + tok.width > avail) {
        // The break falls on this space: keep a styled one (a cursor) on the next row.
        held = [];
        newRow(true);
        if (tok.style.inverse) held.push(tok);
        continue;
      }
      held.push(tok);
      continue;
    }
    if (used + heldWidth() + tok.width <= avail) {
      flushHeld();
      push(row, tok.text, tok.style);
      used += tok.width;
      softBroken = false;
      continue;
    }
    if (used > 0 && tok.width <= avail) {
      held = held.filter((h) => h.style.inverse);
      newRow(true);
      flushHeld();
      push(row, tok.text, tok.style);
      used += tok.width;
      softBroken = false;
      continue;
    }
    // Split a long word.
    flushHeld();
    for (const g of graphemes(tok.text)) {
      const w = graphemeWidth(g);
      if (used + w > avail && used > 0) newRow(true);
      push(row, g, tok.style);
      used += w;
    }
    softBroken = false;
  }
  flushHeld();
  rows.push(row);
  return rows;
}

/** Cut a line to at most `width` columns, ending with `…` when cut. */
export function truncateLine(line: Line, width: number): Line {
  if (lineWidth(line) <= width) return line;
  const out: Line = [];
  let used = 0;
  const limit = Math.max(0, width - 1);
  for (const s of line) {
    let text = '';
    for (const g of graphemes(s.text)) {
      const w = graphemeWidth(g);
      if (used + w > limit) break;
      text += g;
      used += w;
    }
    if (text) out.push({ ...s, text });
    if (used >= limit) break;
  }
  out.push(seg('…', { dim: true }));
  return out;
}

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
