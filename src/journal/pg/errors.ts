/**
 * PostgreSQL failures as the storage seam's typed errors: a lost or refused connection
 * (SQLSTATE class 08, server shutdown or `pg_terminate_backend` 57P01–57P03, the idle
 * transaction timeout 25P03, socket errors, pool connect timeouts, "too many clients"
 * 53300, a failed connect whatever its reason) and a statement timeout (57014) are
 * `JournalUnavailableError`; a second insert of a session row is a
 * `JournalConflictError`; anything else a plain `JournalError`.
 */
import { JournalError } from '../../errors.js';
import { JournalConflictError, JournalUnavailableError } from '../store.js';

/** What the commit was doing when it failed: only a loss during COMMIT leaves the outcome unknown. */
export type CommitPhase = 'connect' | 'begin' | 'write' | 'commit';

const code = (err: unknown): string | undefined => {
  const c = (err as { code?: unknown } | null)?.code;
  return typeof c === 'string' ? c : undefined;
};

const CONNECTION_MESSAGES = /connection terminated|terminated unexpectedly|connection timeout|timeout exceeded when trying to connect|connection error|not queryable|Connection is closed/i;

/** The connection is gone (or never came): the client must be discarded, not reused. */
export function isConnectionLoss(err: unknown): boolean {
  const c = code(err);
  if (c !== undefined && (/^08/.test(c) || /^57P0[1-3]$/.test(c) || c === '25P03' || /^E[A-Z]+$/.test(c))) return true;
  return CONNECTION_MESSAGES.test((err as Error | null)?.message ?? '');
}

/**
 * The store cannot serve now: the connection is lost or refused (also "too many clients",
 * 53300), or the statement was cancelled by `statement_timeout` (57014).
 */
function isUnavailable(err: unknown): boolean {
  const c = code(err);
  return isConnectionLoss(err) || c === '57014' || c === '53300';
}

const UNIQUE_VIOLATION = '23505';

/** A journal that could not be opened (unreachable, refused, migration failed) as a typed error. */
export function openFailure(where: string, err: unknown): JournalError {
  if (err instanceof JournalError) return err;
  const message = `cannot open journal ${where}: ${(err as Error).message}`;
  if (isUnavailable(err)) return new JournalUnavailableError(message, false, err);
  return new JournalError(message, err);
}

/** A failed read as a typed error. */
export function readFailure(what: string, err: unknown): JournalError {
  if (err instanceof JournalError) return err;
  const message = `${what}: ${(err as Error).message}`;
  if (isUnavailable(err)) return new JournalUnavailableError(`journal unavailable: ${message}`, false, err);
  return new JournalError(`journal read failed: ${message}`, err);
}

/** A failed commit as a typed error; nothing was written unless the phase was `commit`. */
export function commitFailure(sessionId: string, head: number, phase: CommitPhase, err: unknown): JournalError {
  if (err instanceof JournalError) return err;
  const detail = (err as Error).message;
  // Without a connection nothing can have been written, whatever the reason it was refused.
  if (isUnavailable(err) || phase === 'connect') {
    const unknown = phase === 'commit';
    const outcome = unknown ? 'the commit may or may not have landed; reload the head' : 'nothing was written';
    return new JournalUnavailableError(`journal unavailable (session ${sessionId}, ${phase}): ${detail}; ${outcome}`, unknown, err);
  }
  if (code(err) === UNIQUE_VIOLATION && (err as { constraint?: string }).constraint === 'sessions_pkey') {
    return new JournalConflictError(sessionId, head, `session ${sessionId} already exists`, err);
  }
  return new JournalError(`journal write failed: ${detail}`, err);
}
