/**
 * What an approval prompt shows of a tool call, for every frontend (the TUI, `agentd
 * send`, the web card, the CLI and ACP): the whole command and every argument, with each
 * control character made visible as an escape (`\r`, `\x1b`, `\u202e`, …) instead of being
 * acted on or dropped, so a prompt can never show something other than what will run.
 * Runs of blank lines collapse into one marker line; `capLines` keeps the start of a long
 * call in view and says how much was left out. Nothing here reads a terminal.
 */

/** A run of a visible line: plain text, or an escape standing for a control character. */
export interface CallPart {
  text: string;
  escape?: boolean;
}

/** One displayed line of a call. */
export type CallLine = CallPart[];

/** One argument of a call: its name and its value as display text (strings raw, the rest JSON). */
export interface CallArgument {
  name: string;
  value: string;
}

/**
 * Characters that must not reach a screen as themselves: C0 (but `\n`) and DEL, C1,
 * bidirectional overrides and isolates, zero-width and line/paragraph separators, BOM.
 */
const INVISIBLE_RE = /[\x00-\x09\x0b-\x1f\x7f-\x9f\u061c\u200b-\u200f\u2028-\u202e\u2060-\u2064\u2066-\u206f\ufeff]/;

const NAMED: Record<string, string> = { '\t': '\\t', '\r': '\\r', '\x1b': '\\x1b', '\0': '\\0', '\b': '\\b', '\f': '\\f', '\v': '\\v' };

/** The escape shown for one invisible character. */
function escapeOf(ch: string): string {
  const named = NAMED[ch];
  if (named !== undefined) return named;
  const code = ch.charCodeAt(0);
  return code <= 0xff ? `\\x${code.toString(16).padStart(2, '0')}` : `\\u${code.toString(16).padStart(4, '0')}`;
}

/** One line (no `\n`) split into plain runs and escapes. */
export function visibleParts(line: string): CallLine {
  const parts: CallLine = [];
  let plain = '';
  for (const ch of line) {
    if (INVISIBLE_RE.test(ch)) {
      if (plain !== '') parts.push({ text: plain });
      plain = '';
      parts.push({ text: escapeOf(ch), escape: true });
    } else plain += ch;
  }
  if (plain !== '' || parts.length === 0) parts.push({ text: plain });
  return parts;
}

/** `text` with every control character replaced by its escape; `\n` stays a line break. */
export function visibleText(text: string): string {
  return text
    .split('\n')
    .map((l) => lineText(visibleParts(l)))
    .join('\n');
}

/** The plain text of a line. */
export function lineText(line: CallLine): string {
  return line.map((p) => p.text).join('');
}

/** The shell command of a call's arguments (a string `command` field), else null. */
function commandField(args: Record<string, unknown> | null): string | null {
  return args !== null && typeof args.command === 'string' ? args.command : null;
}

/** The arguments as an object, parsing a JSON string; null when they are not an object. */
function asObject(args: unknown): Record<string, unknown> | null {
  let v = args;
  if (typeof v === 'string') {
    try {
      v = JSON.parse(v);
    } catch {
      return null;
    }
  }
  return typeof v === 'object' && v !== null && !Array.isArray(v) ? (v as Record<string, unknown>) : null;
}

function valueText(v: unknown): string {
  if (typeof v === 'string') return v;
  try {
    return JSON.stringify(v) ?? String(v);
  } catch {
    return String(v);
  }
}

/**
 * Every argument of a call, in order, the command first when there is one. Arguments
 * that are not an object are one argument named `arguments`.
 */
export function callArguments(args: unknown): CallArgument[] {
  const obj = asObject(args);
  if (obj === null) return args === undefined || args === null ? [] : [{ name: 'arguments', value: valueText(args) }];
  const out: CallArgument[] = [];
  const cmd = commandField(obj);
  if (cmd !== null) out.push({ name: 'command', value: cmd });
  for (const name of Object.keys(obj)) {
    if (name === 'command' && cmd !== null) continue;
    out.push({ name, value: valueText(obj[name]) });
  }
  return out;
}

/** Lines of one multi-line value; runs of 3+ blank lines become one marker line. */
function valueLines(value: string, first: string, rest: string): CallLine[] {
  const raw = value.split('\n');
  const lines: CallLine[] = [];
  for (let i = 0; i < raw.length; i++) {
    let j = i;
    while (j < raw.length && raw[j] === '' && i > 0 && j < raw.length - 1) j++;
    if (j - i >= 3) {
      lines.push([{ text: rest }, { text: `⟨${j - i} empty lines⟩`, escape: true }]);
      i = j - 1;
      continue;
    }
    lines.push([{ text: i === 0 ? first : rest }, ...visibleParts(raw[i]!)]);
  }
  return lines;
}

/**
 * The display lines of a call: `$ COMMAND` (continuation lines indented) when it has a
 * string `command`, then `name: value` for every other argument; `(no arguments)` when
 * there are none.
 */
export function callLines(args: unknown): CallLine[] {
  const list = callArguments(args);
  if (list.length === 0) return [[{ text: '(no arguments)' }]];
  const lines: CallLine[] = [];
  for (const a of list) {
    if (a.name === 'command' && commandField(asObject(args)) !== null) lines.push(...valueLines(a.value, '$ ', '  '));
    else lines.push(...valueLines(a.value, `${visibleText(a.name)}: `, '  '));
  }
  return lines;
}

/** `callLines` as plain text, one line per row. */
export function callText(args: unknown): string {
  return callLines(args).map(lineText).join('\n');
}

/**
 * At most `max` lines (at least 2), keeping the start: past the limit the last kept line
 * is a marker saying how many lines were left out.
 */
export function capLines(lines: CallLine[], max: number): CallLine[] {
  const m = Math.max(2, max);
  if (lines.length <= m) return lines;
  const left = lines.length - (m - 1);
  return [...lines.slice(0, m - 1), [{ text: `… ${left} more line${left === 1 ? '' : 's'} not shown`, escape: true }]];
}
