/**
 * The message editor as a pure state machine: insert/delete, cursor movement, readline
 * shortcuts, multi-line (Alt-Enter or a trailing `\` + Enter), and Up/Down history.
 */
import type { Key } from 'ink';
import { graphemes } from './text.js';

export interface InputState {
  value: string;
  /** UTF-16 offset of the cursor in `value`. */
  cursor: number;
  /** Sent messages, oldest first. */
  history: string[];
  /** Position while browsing history (null = editing the draft). */
  historyIndex: number | null;
  /** The text being edited before history browsing started. */
  draft: string;
}

export type KeyInfo = Partial<Key>;

export interface EditResult {
  state: InputState;
  /** Set when Enter submits the text. */
  submit?: string;
  /** False when the key was not for the editor (the caller may use it). */
  handled: boolean;
}

export const HISTORY_LIMIT = 200;

export function emptyInput(history: string[] = []): InputState {
  return { value: '', cursor: 0, history, historyIndex: null, draft: '' };
}

export function setValue(state: InputState, value: string): InputState {
  return { ...state, value, cursor: value.length, historyIndex: null };
}

/** Remember a sent message (no consecutive duplicates) and clear the editor. */
export function commit(state: InputState, text: string): InputState {
  const history = state.history[state.history.length - 1] === text ? state.history : [...state.history, text];
  return emptyInput(history.slice(-HISTORY_LIMIT));
}

function prevBoundary(value: string, cursor: number): number {
  const gs = graphemes(value.slice(0, cursor));
  return cursor - (gs[gs.length - 1]?.length ?? 0);
}

function nextBoundary(value: string, cursor: number): number {
  const g = graphemes(value.slice(cursor))[0];
  return cursor + (g?.length ?? 0);
}

function wordStart(value: string, cursor: number): number {
  let i = cursor;
  while (i > 0 && /\s/.test(value[i - 1]!)) i--;
  while (i > 0 && !/\s/.test(value[i - 1]!)) i--;
  return i;
}

function wordEnd(value: string, cursor: number): number {
  let i = cursor;
  while (i < value.length && /\s/.test(value[i]!)) i++;
  while (i < value.length && !/\s/.test(value[i]!)) i++;
  return i;
}

const lineStart = (v: string, c: number) => v.lastIndexOf('\n', c - 1) + 1;
const lineEnd = (v: string, c: number) => {
  const i = v.indexOf('\n', c);
  return i === -1 ? v.length : i;
};

function insert(state: InputState, text: string): InputState {
  const { value, cursor } = state;
  return {
    ...state,
    value: value.slice(0, cursor) + text + value.slice(cursor),
    cursor: cursor + text.length,
    historyIndex: null,
  };
}

function edit(state: InputState, from: number, to: number, cursor: number): InputState {
  return { ...state, value: state.value.slice(0, from) + state.value.slice(to), cursor, historyIndex: null };
}

const done = (s: InputState): EditResult => ({ state: s, handled: true });
const notMine = (s: InputState): EditResult => ({ state: s, handled: false });

/** Readline's Ctrl keys: a/e line ends, b/f move, u/k kill, w delete word, d/h delete. */
function ctrlKey(state: InputState, input: string): EditResult {
  const { value, cursor } = state;
  switch (input) {
    case 'a':
      return done({ ...state, cursor: lineStart(value, cursor) });
    case 'e':
      return done({ ...state, cursor: lineEnd(value, cursor) });
    case 'b':
      return done({ ...state, cursor: prevBoundary(value, cursor) });
    case 'f':
      return done({ ...state, cursor: nextBoundary(value, cursor) });
    case 'u': {
      const start = lineStart(value, cursor);
      return done(edit(state, start, cursor, start));
    }
    case 'k':
      return done(edit(state, cursor, lineEnd(value, cursor) === cursor && cursor < value.length ? cursor + 1 : lineEnd(value, cursor), cursor));
    case 'w': {
      const start = wordStart(value, cursor);
      return done(edit(state, start, cursor, start));
    }
    case 'd':
      if (cursor < value.length) return done(edit(state, cursor, nextBoundary(value, cursor), cursor));
      return { state, handled: value.length > 0 };
    case 'h': {
      if (cursor === 0) return done(state);
      const p = prevBoundary(value, cursor);
      return done(edit(state, p, cursor, p));
    }
    default:
      return notMine(state);
  }
}

/** Up: the line above in a multi-line text, else the previous sent message. */
function upKey(state: InputState): EditResult {
  const { value, cursor } = state;
  const ls = lineStart(value, cursor);
  if (ls > 0) {
    const col = cursor - ls;
    const prevStart = lineStart(value, ls - 1);
    return done({ ...state, cursor: Math.min(prevStart + col, ls - 1) });
  }
  if (state.history.length === 0) return done(state);
  const idx = state.historyIndex === null ? state.history.length - 1 : Math.max(0, state.historyIndex - 1);
  const text = state.history[idx]!;
  return done({
    ...state,
    value: text,
    cursor: text.length,
    historyIndex: idx,
    draft: state.historyIndex === null ? value : state.draft,
  });
}

/** Down: the line below in a multi-line text, else the next sent message, then the draft. */
function downKey(state: InputState): EditResult {
  const { value, cursor } = state;
  const le = lineEnd(value, cursor);
  if (le < value.length) {
    const col = cursor - lineStart(value, cursor);
    const nextEnd = lineEnd(value, le + 1);
    return done({ ...state, cursor: Math.min(le + 1 + col, nextEnd) });
  }
  if (state.historyIndex === null) return done(state);
  const idx = state.historyIndex + 1;
  if (idx >= state.history.length) {
    return done({ ...state, value: state.draft, cursor: state.draft.length, historyIndex: null });
  }
  const text = state.history[idx]!;
  return done({ ...state, value: text, cursor: text.length, historyIndex: idx });
}

/** Cursor movement and deletion keys (arrows, Home/End, Backspace/Delete); null when `key` is none of them. */
function movementKey(state: InputState, key: KeyInfo): EditResult | null {
  const { value, cursor } = state;
  if (key.backspace || key.delete) {
    if (key.meta) {
      const start = wordStart(value, cursor);
      return done(edit(state, start, cursor, start));
    }
    if (cursor === 0) return done(state);
    const p = prevBoundary(value, cursor);
    return done(edit(state, p, cursor, p));
  }
  if (key.leftArrow) {
    return done({ ...state, cursor: key.meta || key.ctrl ? wordStart(value, cursor) : prevBoundary(value, cursor) });
  }
  if (key.rightArrow) {
    return done({ ...state, cursor: key.meta || key.ctrl ? wordEnd(value, cursor) : nextBoundary(value, cursor) });
  }
  if (key.home) return done({ ...state, cursor: lineStart(value, cursor) });
  if (key.end) return done({ ...state, cursor: lineEnd(value, cursor) });
  if (key.upArrow) return upKey(state);
  if (key.downArrow) return downKey(state);
  return null;
}

/** Alt-b / Alt-f move by word, Alt-d deletes one. */
function metaKey(state: InputState, input: string): EditResult {
  const { value, cursor } = state;
  if (input === 'b') return done({ ...state, cursor: wordStart(value, cursor) });
  if (input === 'f') return done({ ...state, cursor: wordEnd(value, cursor) });
  if (input === 'd') return done(edit(state, cursor, wordEnd(value, cursor), cursor));
  return notMine(state);
}

/**
 * Apply one key (or a chunk of typed/pasted text). `pasting` is true inside a bracketed
 * paste: newlines are inserted, never submitted. Outside one, a chunk ending in a carriage
 * return (fast typing, `tmux send-keys`, terminals without bracketed paste) inserts the
 * text and then submits.
 */
export function editInput(state: InputState, input: string, key: KeyInfo, pasting = false): EditResult {
  const { value, cursor } = state;
  if (key.return) {
    if (key.meta || key.shift) return done(insert(state, '\n'));
    if (cursor === value.length && value.endsWith('\\')) {
      return done({ ...state, value: value.slice(0, -1) + '\n', cursor: value.length, historyIndex: null });
    }
    return { state, submit: value, handled: true };
  }
  if (key.ctrl) return ctrlKey(state, input);
  const moved = movementKey(state, key);
  if (moved) return moved;
  if (key.escape || key.tab || key.pageUp || key.pageDown) return notMine(state);
  if (key.meta && input.length === 1) return metaKey(state, input);
  if (input === '') return notMine(state);
  // Typed or pasted text; newlines arrive as \r.
  if (!pasting && input.length > 1 && input.endsWith('\r')) {
    const next = insert(state, input.slice(0, -1).replace(/\r\n?/g, '\n'));
    return { state: next, submit: next.value, handled: true };
  }
  return done(insert(state, input.replace(/\r\n?/g, '\n')));
}
