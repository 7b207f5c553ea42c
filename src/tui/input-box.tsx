/** The message editor at the bottom: a bordered box with a prompt, the text and a cursor. */
import { Box } from 'ink';
import type { InputState } from './input.js';
import { Rows } from './rows.js';
import { graphemes, seg, truncateLine, wrap, type Line, type Seg } from './text.js';
import { theme } from './theme.js';

/** At most this many rows of text are shown (the cursor's row stays visible). */
export const MAX_INPUT_ROWS = 8;

/** Rows of the editor content for an inner width. */
export function inputLines(state: InputState, innerWidth: number, placeholder: string, focused = true): Line[] {
  const w = Math.max(4, innerWidth);
  const prompt: Line = [seg('› ', { color: focused ? theme.accent : theme.muted, bold: true })];
  if (state.value === '') {
    const line: Line = [...prompt];
    if (focused) line.push(seg(' ', { inverse: true }));
    line.push(seg(placeholder, { color: theme.muted }));
    return [truncateLine(line, w)];
  }
  const before = state.value.slice(0, state.cursor);
  const after = state.value.slice(state.cursor);
  const segs: Seg[] = [seg(before)];
  if (focused) {
    const g = graphemes(after)[0];
    if (g === undefined) segs.push(seg(' ', { inverse: true }));
    else if (g === '\n') segs.push(seg(' ', { inverse: true }), seg(after));
    else segs.push(seg(g, { inverse: true }), seg(after.slice(g.length)));
  } else {
    segs.push(seg(after));
  }
  const rows = wrap(segs, w, { first: prompt, rest: [seg('  ')] });
  if (rows.length <= MAX_INPUT_ROWS) return rows;
  // Keep the cursor row in view.
  const cursorRow = rows.findIndex((r) => r.some((s) => s.inverse));
  const end = Math.min(rows.length, Math.max(MAX_INPUT_ROWS, cursorRow + 1));
  return rows.slice(end - MAX_INPUT_ROWS, end);
}

export interface InputBoxProps {
  state: InputState;
  width: number;
  placeholder?: string;
  focused?: boolean;
}

export const DEFAULT_PLACEHOLDER = 'Message the agent… (/help for commands)';

export function inputBoxHeight(state: InputState, width: number, placeholder = DEFAULT_PLACEHOLDER, focused = true): number {
  return inputLines(state, width - 4, placeholder, focused).length + 2;
}

export function InputBox({ state, width, placeholder = DEFAULT_PLACEHOLDER, focused = true }: InputBoxProps) {
  const lines = inputLines(state, width - 4, placeholder, focused);
  return (
    <Box borderStyle="round" borderColor={focused ? theme.accent : theme.border} paddingX={1} width={width} flexDirection="column">
      <Rows lines={lines} />
    </Box>
  );
}
