/**
 * The data dir (docs/configuration.md): where the daemon keeps its database, its token and
 * `daemon.json` — what local clients need to find and authenticate to the daemon.
 * Shared by the daemon (`agentd serve` writes these files) and the client library
 * (client/endpoint.ts reads them); it imports nothing of agentd.
 *
 *   DATA_DIR/agentd.db      the journal (SessionHost)
 *   DATA_DIR/token          the client token, mode 0600
 *   DATA_DIR/daemon.json    {url, pid, auth, started_at} of the running daemon, mode 0600
 *   DATA_DIR/config.json    optional configuration
 */
import { randomBytes } from 'node:crypto';
import { chmodSync, mkdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { join, resolve } from 'node:path';

export const TOKEN_FILE = 'token';
export const DAEMON_FILE = 'daemon.json';

/** `$AGENTD_HOME`, else `~/.local/share/agentd`. */
export function defaultDataDir(env: NodeJS.ProcessEnv = process.env): string {
  const home = env.AGENTD_HOME;
  if (home !== undefined && home !== '') return resolve(home);
  return join(homedir(), '.local', 'share', 'agentd');
}

/** The data dir to use: an explicit one, else the default. */
export function resolveDataDir(explicit?: string, env: NodeJS.ProcessEnv = process.env): string {
  return explicit !== undefined && explicit !== '' ? resolve(explicit) : defaultDataDir(env);
}

/** Create the data dir (mode 0700) if missing, else tighten it to 0700; returns its absolute path. */
export function ensureDataDir(dir: string): string {
  const abs = resolve(dir);
  mkdirSync(abs, { recursive: true, mode: 0o700 });
  if ((statSync(abs).mode & 0o777) !== 0o700) chmodSync(abs, 0o700);
  return abs;
}

/** The journal's files in the data dir (the database and its WAL companions). */
export const DATABASE_FILES = ['agentd.db', 'agentd.db-wal', 'agentd.db-shm'];

/**
 * Tighten the journal's files that exist to 0600 (a database created by an older build,
 * or by SQLite under a lax umask, may be readable by others). SQLite creates the WAL
 * companions with the database's mode, so later ones follow.
 */
export function tightenDatabaseFiles(dir: string): void {
  for (const name of DATABASE_FILES) {
    const path = join(dir, name);
    try {
      if ((statSync(path).mode & 0o777) !== 0o600) chmodSync(path, 0o600);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
    }
  }
}

/** Write a file atomically (temp file + rename) with the given mode. */
function writePrivate(path: string, text: string): void {
  const tmp = `${path}.${process.pid}.tmp`;
  writeFileSync(tmp, text, { mode: 0o600 });
  chmodSync(tmp, 0o600);
  renameSync(tmp, path);
}

function readIfExists(path: string): string | null {
  try {
    return readFileSync(path, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw err;
  }
}

/** The token stored in the data dir, or null. */
export function readToken(dir: string): string | null {
  const text = readIfExists(join(dir, TOKEN_FILE));
  const token = text?.trim();
  return token ? token : null;
}

export function writeToken(dir: string, token: string): void {
  writePrivate(join(dir, TOKEN_FILE), `${token}\n`);
}

/** A new random token (256 bits, base64url). */
export function generateToken(): string {
  return randomBytes(32).toString('base64url');
}

/**
 * The daemon's token: `explicit` (--token / AGENTD_TOKEN) if given, else the one in the
 * data dir, else a new one. The result is always stored in DATA_DIR/token (0600) so
 * local clients can read it.
 */
export function resolveServerToken(dir: string, explicit?: string): { token: string; source: 'explicit' | 'file' | 'generated' } {
  if (explicit !== undefined && explicit !== '') {
    if (readToken(dir) !== explicit) writeToken(dir, explicit);
    else chmodSync(join(dir, TOKEN_FILE), 0o600);
    return { token: explicit, source: 'explicit' };
  }
  const stored = readToken(dir);
  if (stored !== null) {
    chmodSync(join(dir, TOKEN_FILE), 0o600);
    return { token: stored, source: 'file' };
  }
  const token = generateToken();
  writeToken(dir, token);
  return { token, source: 'generated' };
}

/** What a running daemon publishes in DATA_DIR/daemon.json. */
export interface DaemonInfo {
  /** `ws://HOST:PORT` (clients connect to `${url}/v1`). */
  url: string;
  pid: number;
  /** False when started with --no-auth. */
  auth: boolean;
  started_at: number;
  version: string;
}

export function writeDaemonInfo(dir: string, info: DaemonInfo): void {
  writePrivate(join(dir, DAEMON_FILE), `${JSON.stringify(info, null, 2)}\n`);
}

/** The daemon.json of the data dir, or null when absent or unreadable. */
export function readDaemonInfo(dir: string): DaemonInfo | null {
  const text = readIfExists(join(dir, DAEMON_FILE));
  if (text === null) return null;
  try {
    const raw = JSON.parse(text) as Partial<DaemonInfo>;
    if (typeof raw.url !== 'string' || typeof raw.pid !== 'number') return null;
    return {
      url: raw.url,
      pid: raw.pid,
      auth: raw.auth !== false,
      started_at: typeof raw.started_at === 'number' ? raw.started_at : 0,
      version: typeof raw.version === 'string' ? raw.version : '',
    };
  } catch {
    return null;
  }
}

/** Remove daemon.json if it still describes this process. */
export function removeDaemonInfo(dir: string, pid = process.pid): void {
  const info = readDaemonInfo(dir);
  if (info && info.pid === pid) rmSync(join(dir, DAEMON_FILE), { force: true });
}

/** True when a process with this pid exists (signal 0). */
export function isProcessAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}
