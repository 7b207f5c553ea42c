/**
 * PostgreSQL journal schema migrations. Each entry upgrades the database by one version;
 * applied versions are recorded in `schema_migrations`. All pending migrations run in one
 * transaction under an advisory lock, so nodes starting at once migrate exactly once.
 * Append only: never edit a migration that has shipped. Numbering is this backend's own;
 * a migration of the SQLite journal (`../migrations.ts`) gets its counterpart here.
 */
import type pg from 'pg';

/** Text, not jsonb, for every JSON column: a batch read back is byte-identical to what was written. */
const MIGRATIONS: readonly string[] = [
  // 1: the SQLite journal's version 1 — sessions with their checkpoint, batches, the model
  // transcript, admissions. `ordinal` is SQLite's rowid: the creation order list paging uses.
  `
  CREATE TABLE sessions (
    session_id    TEXT PRIMARY KEY,
    ordinal       BIGINT GENERATED ALWAYS AS IDENTITY UNIQUE,
    created_at    BIGINT NOT NULL,
    updated_at    BIGINT NOT NULL,
    head_sequence BIGINT NOT NULL DEFAULT 0,
    unfinished    BOOLEAN NOT NULL DEFAULT false,
    checkpoint    TEXT NOT NULL
  );
  CREATE INDEX sessions_unfinished ON sessions (session_id) WHERE unfinished;
  CREATE TABLE batches (
    session_id   TEXT NOT NULL REFERENCES sessions (session_id),
    sequence     BIGINT NOT NULL,
    committed_at BIGINT NOT NULL,
    events       TEXT NOT NULL,
    PRIMARY KEY (session_id, sequence)
  );
  CREATE TABLE transcript (
    session_id TEXT NOT NULL REFERENCES sessions (session_id),
    idx        BIGINT NOT NULL,
    item       TEXT NOT NULL,
    PRIMARY KEY (session_id, idx)
  );
  CREATE TABLE admissions (
    session_id    TEXT NOT NULL REFERENCES sessions (session_id),
    submission_id TEXT NOT NULL,
    sequence      BIGINT NOT NULL,
    PRIMARY KEY (session_id, submission_id)
  );
  `,
  // 2: cluster mode (docs/cluster.md) — the nodes and one lease per session. Times are the
  // database's clock (timestamptz, now()), so nodes with skewed clocks agree on expiry.
  // A lease row is never deleted: handing a lease back expires it, taking it over bumps
  // the epoch, so epochs only grow (the fencing token every commit will check).
  `
  CREATE TABLE nodes (
    node_id       TEXT PRIMARY KEY,
    advertise_url TEXT NOT NULL,
    started_at    TIMESTAMPTZ NOT NULL DEFAULT now(),
    heartbeat_at  TIMESTAMPTZ NOT NULL DEFAULT now(),
    stopped_at    TIMESTAMPTZ
  );
  CREATE TABLE session_leases (
    session_id TEXT PRIMARY KEY,
    node_id    TEXT NOT NULL REFERENCES nodes (node_id),
    epoch      BIGINT NOT NULL CHECK (epoch > 0),
    expires_at TIMESTAMPTZ NOT NULL
  );
  CREATE INDEX session_leases_node ON session_leases (node_id);
  `,
  // 3: cluster settings shared by every node — the client token kept in the database
  // (generated once by the first node when none is given).
  `
  CREATE TABLE cluster_settings (
    key   TEXT PRIMARY KEY,
    value TEXT NOT NULL
  );
  `,
  // 4: a queued message's text and overrides, stored once on its admission row until its
  // turn starts (docs/architecture.md "Queued messages"); the checkpoint lists only ids.
  `
  ALTER TABLE admissions ADD COLUMN queued TEXT;
  CREATE INDEX admissions_queued ON admissions (session_id) WHERE queued IS NOT NULL;
  `,
];

/** The schema version this build writes. */
export const PG_SCHEMA_VERSION = MIGRATIONS.length;

/** Key of the advisory lock that serializes migrations across nodes. */
const MIGRATION_LOCK = 0x61676e74; // "agnt"

export class SchemaTooNewError extends Error {
  constructor(readonly version: number) {
    super(`journal schema version ${version} is newer than this agentd (${PG_SCHEMA_VERSION}); upgrade agentd`);
    this.name = 'SchemaTooNewError';
  }
}

/** Bring the database up to PG_SCHEMA_VERSION; refuses a database from a newer build. Returns the version. */
export async function migratePg(client: pg.ClientBase): Promise<number> {
  await client.query('BEGIN');
  try {
    await client.query('SELECT pg_advisory_xact_lock($1)', [MIGRATION_LOCK]);
    await client.query('CREATE TABLE IF NOT EXISTS schema_migrations (version INTEGER PRIMARY KEY, applied_at BIGINT NOT NULL)');
    const { rows } = await client.query<{ v: number | null }>('SELECT MAX(version) AS v FROM schema_migrations');
    const current = rows[0]?.v ?? 0;
    if (current > PG_SCHEMA_VERSION) throw new SchemaTooNewError(current);
    for (let version = current + 1; version <= PG_SCHEMA_VERSION; version++) {
      await client.query(MIGRATIONS[version - 1]!);
      await client.query('INSERT INTO schema_migrations (version, applied_at) VALUES ($1, $2)', [version, Date.now()]);
    }
    await client.query('COMMIT');
    return PG_SCHEMA_VERSION;
  } catch (err) {
    await client.query('ROLLBACK').catch(() => {});
    throw err;
  }
}
