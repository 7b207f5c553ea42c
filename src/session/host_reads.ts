/**
 * The host's reads of sessions, resident or at rest in the journal: a page of the session
 * list (newest first; subagent sessions only on request, pages filled past them) and
 * another session as `resume_session` shows it.
 */
import type { SessionDescriptor } from '../../protocol/index.js';
import type { SessionJournal, StoredSession } from '../journal/journal.js';
import type { ListOptions } from './api.js';
import type { OtherSession } from './deps.js';
import type { Session } from './session.js';
import { parseCheckpoint, sessionStatus, toDescriptor, type SessionState } from './state.js';

/** One page of descriptors: a resident session's live one, else its checkpoint's (an unreadable one is left out and reported). */
export async function listPage(
  journal: SessionJournal,
  resident: (sessionId: string) => Session | undefined,
  options: ListOptions,
  unreadable: (sessionId: string, err: unknown) => void,
): Promise<{ sessions: SessionDescriptor[]; next_before: string | null }> {
  const sessions: SessionDescriptor[] = [];
  let before = options.before;
  for (;;) {
    const rows = await journal.listSessions(options.limit + 1, before);
    const page = rows.slice(0, options.limit);
    for (const row of page) {
      const live = resident(row.sessionId);
      let descriptor: SessionDescriptor;
      try {
        descriptor = live ? live.descriptor() : toDescriptor(parseCheckpoint(row.checkpoint), row.headSequence);
      } catch (err) {
        // One unreadable checkpoint must not hide every other session.
        unreadable(row.sessionId, err);
        continue;
      }
      if (descriptor.parent_session_id !== null && !options.include_children) continue;
      sessions.push(descriptor);
      if (sessions.length === options.limit) {
        const more = row !== rows[rows.length - 1];
        return { sessions, next_before: more ? row.sessionId : null };
      }
    }
    if (rows.length <= options.limit) return { sessions, next_before: null };
    before = page[page.length - 1]!.sessionId;
  }
}

/** Another session as resume_session shows it (resident, else stored): its descriptor's summary, if its checkpoint names it. */
export function otherSession(sessionId: string, live: Session | undefined, stored: StoredSession | null): OtherSession | null {
  if (!live && !stored) return null;
  let state: SessionState;
  try {
    state = live ? live.state : parseCheckpoint(stored!.checkpoint);
  } catch {
    return null;
  }
  if (state.session_id !== sessionId) return null;
  return {
    session_id: state.session_id,
    title: state.title,
    cwd: state.cwd,
    model: state.model,
    head_sequence: live ? live.headSequence() : stored!.headSequence,
    status: sessionStatus(state),
  };
}
