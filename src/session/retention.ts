/**
 * Retention (docs/sessions.md#retention): with `retention.delete_after_days` set, the
 * sessions idle for longer — no activity (their checkpoint's `updated_at`) for that many
 * days — are deleted, with their subagent sessions, at start-up and then once a day. A
 * session with a running or waiting turn is never swept (it is not idle); subagent
 * sessions go with their parent and are not swept on their own.
 */
import type { Logger } from 'pino';
import { AgentdError } from '../errors.js';
import type { SessionJournal } from '../journal/journal.js';

const DAY_MS = 24 * 60 * 60 * 1000;
const PAGE = 500;

export interface RetentionOptions {
  days: number;
  journal: SessionJournal;
  /** Delete a session without force (a busy one is refused and kept). */
  remove: (sessionId: string) => Promise<string[]>;
  logger?: Logger | undefined;
  now?: () => number;
}

/** Ids of root sessions whose last activity is older than `cutoff`, read page by page. */
export async function expiredSessions(journal: SessionJournal, cutoff: number): Promise<string[]> {
  const expired: string[] = [];
  let before: string | undefined;
  for (;;) {
    const page = await journal.listSessions(PAGE, before);
    for (const stored of page) {
      let state: { updated_at?: unknown; parent?: unknown };
      try {
        state = JSON.parse(stored.checkpoint) as { updated_at?: unknown; parent?: unknown };
      } catch {
        continue; // unreadable: never deleted by a sweep
      }
      const at = typeof state.updated_at === 'number' ? state.updated_at : stored.createdAt;
      if (!state.parent && at < cutoff) expired.push(stored.sessionId);
    }
    if (page.length < PAGE) return expired;
    before = page[page.length - 1]!.sessionId;
  }
}

/** Sweep now and then daily; returns the stop function. */
export function startRetention(options: RetentionOptions): () => void {
  let running = false;
  const sweep = async (): Promise<void> => {
    if (running) return;
    running = true;
    try {
      const cutoff = (options.now ?? Date.now)() - options.days * DAY_MS;
      let deleted = 0;
      for (const id of await expiredSessions(options.journal, cutoff)) {
        try {
          deleted += (await options.remove(id)).length;
        } catch (err) {
          if (err instanceof AgentdError && (err.code === 'busy' || err.code === 'unknown_session')) continue;
          if (err instanceof AgentdError && err.code === 'stopped') return;
          options.logger?.warn({ err, session_id: id }, 'retention: the session could not be deleted');
        }
      }
      if (deleted > 0) options.logger?.info({ deleted, delete_after_days: options.days }, 'retention: idle sessions deleted');
    } catch (err) {
      options.logger?.warn({ err }, 'retention sweep failed; the next one tries again');
    } finally {
      running = false;
    }
  };
  const first = setTimeout(() => void sweep(), 0);
  const daily = setInterval(() => void sweep(), DAY_MS);
  first.unref();
  daily.unref();
  return () => {
    clearTimeout(first);
    clearInterval(daily);
  };
}
