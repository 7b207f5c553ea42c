/**
 * The title a session takes from its first message when it was created without one
 * (docs/sessions.md): the first line holding visible text, control characters removed,
 * at most `LIMITS.autoTitleMaxChars` characters (a longer line is cut and ends with `…`).
 * Shared by the daemon and the web UI so both derive the same title.
 */
import { LIMITS } from './limits.js';

/** C0 and C1 controls, DEL, and the bidirectional formatting characters. */
const CONTROLS = /[\u0000-\u001f\u007f-\u009f\u200e\u200f\u202a-\u202e\u2066-\u2069]/gu;
/**
 * Whole terminal escape sequences, removed before the controls so none of their text is
 * left behind: OSC (`ESC ]` … BEL or `ESC \\`), CSI (`ESC [` … final byte), and other
 * two-character escapes.
 */
const ESCAPES = /\u001b\][^\u0007\u001b]*(?:\u0007|\u001b\\)?|\u009d[^\u0007\u001b\u009c]*(?:\u0007|\u009c)?|(?:\u001b\[|\u009b)[0-?]*[ -/]*[@-~]?|\u001b[@-Z\\-_]/gu;

/** `text` without escape sequences and control characters (each replaced by a space). */
function visibleOnly(text: string): string {
  return text.replace(ESCAPES, ' ').replace(CONTROLS, ' ');
}

/** The title for a session whose first message is `text`; null when the text has no visible line. */
export function titleFromMessage(text: string): string | null {
  // Only the start of a long message is looked at (a message may hold 1 MiB).
  const head = text.slice(0, 16 * 1024);
  for (const raw of head.split(/\r\n|\r|\n/u)) {
    const line = visibleOnly(raw).replace(/\s+/gu, ' ').trim();
    if (line === '') continue;
    const chars = Array.from(line);
    if (chars.length <= LIMITS.autoTitleMaxChars) return line;
    return `${chars.slice(0, LIMITS.autoTitleMaxChars - 1).join('').trimEnd()}…`;
  }
  return null;
}

/** A title as a client gave it (`session title`, `create_session`): control characters removed, blanks collapsed; null when nothing visible is left. */
export function cleanTitle(title: string): string | null {
  return visibleOnly(title).replace(/\s+/gu, ' ').trim() || null;
}
