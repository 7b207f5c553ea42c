/**
 * Recovery helpers of the session host: what a session that cannot be recovered gets in
 * its journal, a context estimate rebuilt for old checkpoints, and the checks a takeover
 * makes before hydrating (the session's cwd must exist on this node).
 */
import { homedir } from 'node:os';
import { statSync } from 'node:fs';
import type { SessionJournal } from '../journal/journal.js';
import type { SharedWriter } from '../journal/writer.js';
import { modelView, viewTokens, type TranscriptItem } from './context.js';
import { eventEntry } from './event_fit.js';
import { findOpenTurn } from './open_turn.js';
import { recordUnrecoverable } from './recorder.js';
import { EMPTY_CONTEXT, parseCheckpoint, type SessionState } from './state.js';

/**
 * A checkpoint from before context accounting: its estimate rebuilt from the transcript
 * (bytes / 4 of the model's view; the system prompt and tools are counted at the next report).
 */
export function withRebuiltContext(state: SessionState, stored: string[]): SessionState {
  const view = modelView(stored.map((t) => JSON.parse(t) as TranscriptItem));
  return { ...state, context: { ...EMPTY_CONTEXT, estimated_tokens: viewTokens(view, 0), items: view.length } };
}

/** The cwd a checkpoint names (null if unreadable: hydration reports that). */
export function cwdOf(checkpoint: string): string | null {
  try {
    return parseCheckpoint(checkpoint).cwd;
  } catch {
    return null;
  }
}

export function isDirectory(path: string): boolean {
  try {
    return statSync(path).isDirectory();
  } catch {
    return false;
  }
}

/**
 * A session that cannot be recovered (e.g. an unreadable checkpoint) gets a clear error
 * in its journal: its open turn, if any, ends `turn_failed {code: "recovery_failed"}`,
 * and a warning says why. It is no longer flagged unfinished, so the next start does
 * not try again; the daemon and the other sessions go on. Rejects if the journal cannot
 * record it. The record goes through the node's shared writer like every other write.
 */
export async function recordRecoveryFailure(journal: SessionJournal, writer: SharedWriter, sessionId: string, error: Error): Promise<void> {
  const stored = await journal.loadSession(sessionId);
  if (!stored) return;
  const now = Date.now();
  const entries: string[] = [];
  const open = await findOpenTurn(journal, sessionId, stored.headSequence);
  if (open) {
    const failed = { code: 'recovery_failed' as const, message: `the turn could not be recovered: ${error.message}` };
    entries.push(eventEntry({ type: 'turn_failed', error: failed }, open.submission_id, open.turn_id, now));
  }
  const why = `session recovery failed: ${error.message}; the session cannot be served until it is repaired`;
  entries.push(eventEntry({ type: 'warning', message: why }, null, null, now));
  await recordUnrecoverable(writer, stored, entries);
}

/** `~` and `~/…` name the user's home directory (the `workspace` key, `create_session.config.cwd`). */
export function expandHome(path: string): string {
  if (path === '~') return homedir();
  return path.startsWith('~/') ? `${homedir()}${path.slice(1)}` : path;
}
