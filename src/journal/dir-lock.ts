/**
 * One daemon per data dir (docs/operations.md): `agentd serve` holds an exclusive
 * operating-system lock on DATA_DIR/daemon.lock for its whole life. The lock is SQLite's
 * own file lock (an exclusive write transaction that is never committed), so it is
 * atomic — two daemons started at the same instant cannot both get it — and the kernel
 * drops it when the process dies, however it dies. The holder writes its pid to
 * DATA_DIR/daemon.pid so a refused daemon can name it.
 */
import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';

export const LOCK_FILE = 'daemon.lock';
export const PID_FILE = 'daemon.pid';

/** The lock, held until `release()` or the process ends. */
export interface DirLock {
  release(): void;
}

export type LockResult = { ok: true; lock: DirLock } | { ok: false; holderPid: number | null };

/** Try once to take the data dir's lock; never waits for it. */
export function lockDataDir(dataDir: string): LockResult {
  const db = new Database(join(dataDir, LOCK_FILE), { timeout: 0 });
  try {
    db.pragma('locking_mode = EXCLUSIVE');
    db.exec('BEGIN EXCLUSIVE');
    db.exec('CREATE TABLE IF NOT EXISTS holder (pid INTEGER)');
  } catch (err) {
    db.close();
    if ((err as { code?: string }).code?.startsWith('SQLITE_BUSY')) return { ok: false, holderPid: readHolderPid(dataDir) };
    throw err;
  }
  writeFileSync(join(dataDir, PID_FILE), `${process.pid}\n`, { mode: 0o600 });
  held.add(db); // a strong reference for the process's life
  return {
    ok: true,
    lock: {
      release: () => {
        if (!held.delete(db)) return;
        rmSync(join(dataDir, PID_FILE), { force: true });
        db.close();
      },
    },
  };
}

const held = new Set<Database.Database>();

/** The pid in daemon.pid, or null (not written yet, or unreadable). */
export function readHolderPid(dataDir: string): number | null {
  try {
    const pid = Number(readFileSync(join(dataDir, PID_FILE), 'utf8').trim());
    return Number.isInteger(pid) && pid > 0 ? pid : null;
  } catch {
    return null;
  }
}
