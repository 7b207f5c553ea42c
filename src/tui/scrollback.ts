/**
 * The conversation as plain text for the terminal's scrollback: the TUI runs on the
 * alternate screen, which is wiped when it detaches, so `agentd attach` prints the loaded
 * transcript (laid out as on screen, without colour) to the normal screen on leaving.
 */
import type { ViewState } from './controller.js';
import { layoutTranscript } from './layout.js';
import type { Line } from './text.js';

/** One line of text per row, as the TUI shows it (with its one-column margin). */
export function plainRows(lines: readonly Line[]): string[] {
  return lines.map((l) => ` ${l.map((s) => s.text).join('')}`.trimEnd());
}

/** The loaded transcript of a view for a terminal of `columns`, ending with a newline ('' when empty). */
export function scrollbackText(view: Pick<ViewState, 'transcript' | 'notes' | 'showReasoning' | 'nextBeforeSequence'>, columns: number): string {
  const body = layoutTranscript(view.transcript.items, view.notes, Math.max(20, columns) - 2, view.showReasoning);
  if (body.length === 0) return '';
  const head = view.nextBeforeSequence !== null ? [' ↑ earlier history not shown (agentd attach loads it with PgUp)', ''] : [];
  return [...head, ...plainRows(body), ''].join('\n') + '\n';
}
