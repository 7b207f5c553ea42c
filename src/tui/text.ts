/**
 * Styled text for the TUI: segments (runs of one style), word wrapping them into
 * terminal rows and cutting rows to a width. Measuring is string-width's; only the
 * segment handling is ours (see docs/dependencies.md). Text is expected sanitised
 * (render/sanitize.ts).
 */
import stringWidth from 'string-width';

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

/** Display width of a line of segments (string-width: East Asian width, emoji, combining marks). */
export function lineWidth(line: Line): number {
  let w = 0;
  for (const s of line) w += stringWidth(s.text);
  return w;
}

/** Split into grapheme clusters. */
export function graphemes(s: string): string[] {
  if (/^[\x20-\x7e]*$/.test(s)) return s.split('');
  return Array.from(segmenter.segment(s), (x) => x.segment);
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
      else out.push({ text: part, style, width: stringWidth(part), kind: 'word' });
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
      const w = stringWidth(g);
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

/**
 * Cut a line to at most `width` columns, ending with `…` when cut. A double-width
 * character that would straddle the cut is left out (cli-truncate keeps it and
 * overshoots by a column, so this walks graphemes itself).
 */
export function truncateLine(line: Line, width: number): Line {
  if (lineWidth(line) <= width) return line;
  const out: Line = [];
  let used = 0;
  const limit = Math.max(0, width - 1);
  for (const s of line) {
    let text = '';
    for (const g of graphemes(s.text)) {
      const w = stringWidth(g);
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
