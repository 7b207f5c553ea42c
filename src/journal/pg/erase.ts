/**
 * Deleting sessions from the PostgreSQL journal: a session and its subagent sessions
 * (found through their checkpoints' `parent`) lose their rows in every table — batches,
 * transcript, admissions, the cluster lease, the session row — in one transaction. A
 * `VACUUM` of those tables follows, outside the transaction, so the dead rows' space is
 * reclaimed for reuse (docs/sessions.md#deleting-sessions).
 */
import type pg from 'pg';
import { JournalError } from '../../errors.js';
import { isConnectionLoss, readFailure } from './errors.js';

/** Every node's LISTEN connection hears of a delete here: JSON `{session_id, deleted_session_ids}`. */
export const DELETE_CHANNEL = 'agentd_deleted';

const TREE = `
  WITH RECURSIVE tree(id, depth) AS (
    SELECT session_id, 0 FROM sessions WHERE session_id = $1
    UNION
    SELECT s.session_id, t.depth + 1 FROM sessions s JOIN tree t
      ON (s.checkpoint::jsonb -> 'parent' ->> 'session_id') = t.id
    WHERE t.depth < 64
  )
  SELECT id FROM tree ORDER BY depth`;

/** Every per-session table, the sessions row last (the others reference it). */
const TABLES = ['batches', 'transcript', 'admissions', 'session_leases', 'sessions'] as const;

/** Delete the session tree in one transaction; answers the deleted ids (the session first), empty when none. */
export async function eraseSessionsPg(pool: pg.Pool, sessionId: string): Promise<string[]> {
  let client: pg.PoolClient | undefined;
  try {
    client = await pool.connect();
    await client.query('BEGIN');
    // Lock the root row: a concurrent commit of the session waits, then finds it gone.
    await client.query('SELECT 1 FROM sessions WHERE session_id = $1 FOR UPDATE', [sessionId]);
    const { rows } = await client.query<{ id: string }>(TREE, [sessionId]);
    const ids = rows.map((r) => r.id);
    for (const table of TABLES) await client.query(`DELETE FROM ${table} WHERE session_id = ANY($1::text[])`, [ids]);
    // Delivered when (and only if) the delete commits: other nodes tell their attached clients.
    if (ids.length > 0) {
      await client.query('SELECT pg_notify($1, $2)', [DELETE_CHANNEL, JSON.stringify({ session_id: sessionId, deleted_session_ids: ids.slice(0, 256) })]);
    }
    await client.query('COMMIT');
    client.release();
    client = undefined;
    if (ids.length > 0) void vacuum(pool);
    return ids;
  } catch (err) {
    const lost = isConnectionLoss(err);
    const rolledBack = client !== undefined && !lost && (await client.query('ROLLBACK').then(() => true, () => false));
    client?.release(rolledBack ? undefined : true);
    if (err instanceof JournalError) throw err;
    throw readFailure('deleteSessions', err);
  }
}

/** Best effort: the dead rows' space is reclaimed now rather than at the next autovacuum. */
async function vacuum(pool: pg.Pool): Promise<void> {
  try {
    await pool.query(`VACUUM ${TABLES.join(', ')}`);
  } catch {
    /* autovacuum does it later */
  }
}
