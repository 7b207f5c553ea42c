/**
 * The conversation as text for the terminal's scrollback: the TUI runs on the alternate
 * screen, which is wiped when it detaches, so `agentd attach` prints the loaded transcript
 * (laid out as on screen; coloured with plain SGR codes, or without colour) to the
 * normal screen on leaving.
 */
import type { ViewState } from './controller.js';
import { layoutTranscript } from './layout.js';
import type { Line, Seg } from './text.js';

const COLOR_NAMES = ['black', 'red', 'green', 'yellow', 'blue', 'magenta', 'cyan', 'white'];

/** SGR code of an Ink/chalk colour name (`red`, `redBright`, `gray`); undefined for others (hex). */
function colorCode(name: string): number | undefined {
  if (name === 'gray' || name === 'grey' || name === 'blackBright') return 90;
  const bright = name.endsWith('Bright');
  const i = COLOR_NAMES.indexOf(bright ? name.slice(0, -'Bright'.length) : name);
  if (i < 0) return undefined;
  return (bright ? 90 : 30) + i;
}

function styled(s: Seg): string {
  const codes: number[] = [];
  if (s.bold) codes.push(1);
  if (s.dim) codes.push(2);
  if (s.italic) codes.push(3);
  if (s.underline) codes.push(4);
  if (s.inverse) codes.push(7);
  const fg = s.color ? colorCode(s.color) : undefined;
  if (fg !== undefined) codes.push(fg);
  const bg = s.bg ? colorCode(s.bg) : undefined;
  if (bg !== undefined) codes.push(bg + 10);
  return codes.length === 0 || s.text === '' ? s.text : `\x1b[${codes.join(';')}m${s.text}\x1b[0m`;
}

/** One line of text per row, as the TUI shows it (with its one-column margin). */
export function textRows(lines: readonly Line[], colors = false): string[] {
  return lines.map((l) => ` ${l.map((s) => (colors ? styled(s) : s.text)).join('')}`.trimEnd());
}

type Shown = Pick<ViewState, 'transcript' | 'notes' | 'showReasoning' | 'nextBeforeSequence'>;

/** The loaded transcript of a view for a terminal of `columns`, ending with a blank line ('' when empty). */
export function scrollbackText(view: Shown, columns: number, colors = false): string {
  const body = layoutTranscript(view.transcript.items, view.notes, Math.max(20, columns) - 2, view.showReasoning);
  if (body.length === 0) return '';
  const head = view.nextBeforeSequence !== null ? [' ↑ earlier history not shown (agentd attach loads it with PgUp)', ''] : [];
  return [...head, ...textRows(body, colors), ''].join('\n') + '\n';
}
