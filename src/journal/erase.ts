/**
 * Deleting sessions from the SQLite journal for good: a session and its subagent sessions
 * (children, grandchildren — found through their checkpoints' `parent`) lose every row
 * of every table in one transaction, with `secure_delete` on so the freed cells and pages
 * are overwritten with zeros, then the WAL is checkpointed and truncated (its old frames
 * held the text too) and, on a database with `auto_vacuum = INCREMENTAL` (every journal
 * created by this build), the free pages are given back to the file system.
 * See docs/sessions.md#deleting-sessions.
 */
import type Database from 'better-sqlite3';

/** The session and all its descendants, the session first; empty when it does not exist. */
const TREE = `
  WITH RECURSIVE tree(id, depth) AS (
    SELECT session_id, 0 FROM sessions WHERE session_id = ?
    UNION
    SELECT s.session_id, t.depth + 1 FROM sessions s JOIN tree t
      ON json_extract(s.checkpoint, '$.parent.session_id') = t.id
    WHERE t.depth < 64
  )
  SELECT id FROM tree ORDER BY depth`;

/** Every table holding rows of a session (all keyed by `session_id`), the sessions table last. */
export const SESSION_TABLES = ['batches', 'transcript', 'admissions', 'sessions'] as const;

/**
 * Delete `sessionId` and its descendants in one transaction; answers the deleted ids (the
 * session first), empty when there was no such session. Throws on a database failure
 * (nothing deleted).
 */
export function eraseSessions(db: Database.Database, sessionId: string): string[] {
  const ids = db.prepare(TREE).pluck().all(sessionId) as string[];
  if (ids.length === 0) return [];
  const deletes = SESSION_TABLES.map((table) => db.prepare(`DELETE FROM ${table} WHERE session_id = ?`));
  const previous = db.pragma('secure_delete', { simple: true }) as number;
  db.pragma('secure_delete = ON');
  try {
    db.transaction(() => {
      for (const id of ids) for (const stmt of deletes) stmt.run(id);
    })();
  } finally {
    db.pragma(`secure_delete = ${previous === 1 ? 'ON' : previous === 2 ? 'FAST' : 'OFF'}`);
  }
  convertOnce(db);
  reclaim(db);
  return ids;
}

/**
 * After a delete: give free pages back (incremental auto-vacuum; a no-op on a database
 * created without it, whose zeroed free pages are reused by later writes), then copy the
 * WAL into the database and truncate it, so no old frame keeps the deleted text. Both are
 * best effort: a busy WAL is truncated by the next checkpoint.
 */
function reclaim(db: Database.Database): void {
  try {
    db.pragma('incremental_vacuum');
    db.pragma('wal_checkpoint(TRUNCATE)');
  } catch {
    /* the next checkpoint does it */
  }
}

/**
 * At open: every update and delete zeroes the old cell in its page (`secure_delete =
 * FAST`, no extra I/O), so no earlier version of a checkpoint lingers in a page's free
 * space; a journal being created gets incremental auto-vacuum (free pages returned to
 * the file system after a delete).
 */
export function prepareErasure(db: Database.Database, created: boolean): void {
  if (created) db.pragma('auto_vacuum = INCREMENTAL');
  db.pragma('secure_delete = FAST');
}

/**
 * A journal created by an older build (no incremental auto-vacuum, old cells left in free
 * space): its first delete rewrites the whole file once with `VACUUM` — only live rows are
 * copied — switching it to incremental auto-vacuum. Later deletes need no rewrite.
 */
function convertOnce(db: Database.Database): void {
  if ((db.pragma('auto_vacuum', { simple: true }) as number) === 2) return;
  db.pragma('auto_vacuum = INCREMENTAL');
  db.exec('VACUUM');
}
