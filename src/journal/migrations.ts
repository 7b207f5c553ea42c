/**
 * Journal schema migrations. Each entry upgrades the database by one version; the
 * applied versions are recorded in `schema_migrations`. Append only: never edit a
 * migration that has shipped.
 */
import type Database from 'better-sqlite3';

const MIGRATIONS: readonly string[] = [
  // 1: sessions with their checkpoint, batches, the model transcript, admissions.
  `
  CREATE TABLE sessions (
    session_id    TEXT PRIMARY KEY,
    created_at    INTEGER NOT NULL,
    updated_at    INTEGER NOT NULL,
    head_sequence INTEGER NOT NULL DEFAULT 0,
    unfinished    INTEGER NOT NULL DEFAULT 0,
    checkpoint    TEXT NOT NULL
  );
  CREATE INDEX sessions_unfinished ON sessions (unfinished) WHERE unfinished = 1;
  CREATE TABLE batches (
    session_id   TEXT NOT NULL,
    sequence     INTEGER NOT NULL,
    committed_at INTEGER NOT NULL,
    events       TEXT NOT NULL,
    PRIMARY KEY (session_id, sequence)
  );
  CREATE TABLE transcript (
    session_id TEXT NOT NULL,
    idx        INTEGER NOT NULL,
    item       TEXT NOT NULL,
    PRIMARY KEY (session_id, idx)
  ) WITHOUT ROWID;
  CREATE TABLE admissions (
    session_id    TEXT NOT NULL,
    submission_id TEXT NOT NULL,
    sequence      INTEGER NOT NULL,
    PRIMARY KEY (session_id, submission_id)
  ) WITHOUT ROWID;
  `,
  // 2: a queued message's text and overrides, stored once on its admission row until its
  // turn starts (docs/architecture.md "Queued messages"); the checkpoint lists only ids.
  `
  ALTER TABLE admissions ADD COLUMN queued TEXT;
  CREATE INDEX admissions_queued ON admissions (session_id) WHERE queued IS NOT NULL;
  `,
];

/** The schema version this build writes. */
export const SCHEMA_VERSION = MIGRATIONS.length;

/** Bring the database up to SCHEMA_VERSION; refuses a database from a newer build. */
export function migrate(db: Database.Database): void {
  db.exec('CREATE TABLE IF NOT EXISTS schema_migrations (version INTEGER PRIMARY KEY, applied_at INTEGER NOT NULL)');
  const row = db.prepare('SELECT MAX(version) AS v FROM schema_migrations').get() as { v: number | null };
  const current = row.v ?? 0;
  if (current > SCHEMA_VERSION) {
    throw new Error(`journal schema version ${current} is newer than this agentd (${SCHEMA_VERSION}); upgrade agentd`);
  }
  for (let version = current + 1; version <= SCHEMA_VERSION; version++) {
    db.transaction(() => {
      db.exec(MIGRATIONS[version - 1]!);
      db.prepare('INSERT INTO schema_migrations (version, applied_at) VALUES (?, ?)').run(version, Date.now());
    })();
  }
}
