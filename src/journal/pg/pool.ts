/**
 * The connection pool of the PostgreSQL journal: `statement_timeout` and
 * `idle_in_transaction_session_timeout` set on every connection (startup parameters), a
 * connect timeout, and an `error` handler on the pool and on every client it opens, so a
 * connection the server drops (restart, `pg_terminate_backend`, network) is discarded and
 * reported instead of crashing the process.
 */
import pg from 'pg';
import { JournalUnavailableError } from '../store.js';

export interface PgPoolOptions {
  /** `postgres://user:password@host:port/database` (also `?host=/socket/dir`). */
  url: string;
  /** Most connections open at once (default 10). */
  max?: number;
  /** Any statement running longer is cancelled by the server (default 5000 ms). */
  statementTimeoutMs?: number;
  /** A connection idle inside a transaction this long is closed by the server (default 10000 ms). */
  idleInTransactionTimeoutMs?: number;
  /** Give up opening a connection after this long (default 5000 ms). */
  connectTimeoutMs?: number;
  /** Shown in `pg_stat_activity` (default `agentd`). */
  applicationName?: string;
  /** Told about every connection that is lost (the pool discards it and opens another when needed). */
  onError?: (err: JournalUnavailableError) => void;
}

export const PG_POOL_DEFAULTS = {
  max: 10,
  statementTimeoutMs: 5000,
  idleInTransactionTimeoutMs: 10_000,
  connectTimeoutMs: 5000,
  applicationName: 'agentd',
} as const;

export function createPool(options: PgPoolOptions): pg.Pool {
  const pool = new pg.Pool({
    connectionString: options.url,
    max: options.max ?? PG_POOL_DEFAULTS.max,
    statement_timeout: options.statementTimeoutMs ?? PG_POOL_DEFAULTS.statementTimeoutMs,
    idle_in_transaction_session_timeout: options.idleInTransactionTimeoutMs ?? PG_POOL_DEFAULTS.idleInTransactionTimeoutMs,
    connectionTimeoutMillis: options.connectTimeoutMs ?? PG_POOL_DEFAULTS.connectTimeoutMs,
    application_name: options.applicationName ?? PG_POOL_DEFAULTS.applicationName,
  });
  const report = (err: Error) =>
    options.onError?.(new JournalUnavailableError(`journal connection lost: ${err.message}`, false, err));
  // A client whose connection dies emits `error` on itself, idle or checked out; without a
  // listener that would be an uncaught exception. Each lost connection is reported here,
  // once; a query in flight on it rejects on its own and its holder releases it as broken.
  pool.on('connect', (client) => client.on('error', report));
  // The pool re-emits an idle client's error after removing it: already reported above.
  pool.on('error', () => {});
  return pool;
}
