/**
 * Making untrusted text (tool output, titles, model replies) safe to print on a
 * terminal: escape sequences go (strip-ansi), control characters go, carriage-return
 * overwrites resolve to their last state and tabs expand. One function for the TUI and
 * the scripting commands.
 */
import stripAnsi from 'strip-ansi';

/** C0 and C1 control characters except `\t` and `\n` (handled on their own). */
const CONTROL_RE = /[\x00-\x08\x0b-\x1f\x7f-\x9f]/g;

/** Resolve `\r` overwrites on each line: the last non-empty overwrite wins (progress bars). */
function resolveCarriageReturns(s: string): string {
  return s
    .split('\n')
    .map((l) => {
      const parts = l.split('\r');
      for (let i = parts.length - 1; i >= 0; i--) if (parts[i] !== '') return parts[i];
      return '';
    })
    .join('\n');
}

/** Expand tabs to the next multiple of 4 columns, per line. */
function expandTabs(s: string): string {
  return s
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

/**
 * Make untrusted text safe to print: drop escape sequences and control characters,
 * normalise newlines, resolve carriage-return overwrites and expand tabs. Newlines stay.
 */
export function sanitize(text: string): string {
  let s = stripAnsi(text).replace(/\r\n/g, '\n');
  if (s.includes('\r')) s = resolveCarriageReturns(s);
  if (s.includes('\t')) s = expandTabs(s);
  return s.replace(CONTROL_RE, '');
}

/** `sanitize` for one-line fields (a table cell, a title): line breaks become spaces. */
export function sanitizeLine(text: string): string {
  return sanitize(text).replace(/\n+/g, ' ');
}
