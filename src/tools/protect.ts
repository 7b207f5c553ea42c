/**
 * The daemon's own files — token, journal, configuration, daemon.json in the data dir —
 * are never opened by a file tool, even when the data dir lies inside a session's cwd:
 * refused by name in the data dir (also when they do not exist yet) and by identity
 * (device and inode), so a hard link or a bind mount elsewhere is refused too.
 */
import { fstatSync, type Stats } from 'node:fs';
import { realpath, stat } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import type { Protected } from './confine.js';

/** File names of the data dir that belong to the daemon. */
export const DAEMON_FILES: readonly string[] = [
  'token',
  'daemon.json',
  'config.json',
  'agentd.db',
  'agentd.db-wal',
  'agentd.db-shm',
  'agentd.db-journal',
];

const same = (a: { dev: number; ino: number }, b: { dev: number; ino: number }) => a.dev === b.dev && a.ino === b.ino;

/** How long the data dir's identities are reused before they are looked up again (ms). */
const IDENTITY_TTL_MS = 1000;

interface Identities {
  at: number;
  home: { dev: number; ino: number } | null;
  /** The data dir's real path ('' when it does not exist). */
  homeReal: string;
  own: Array<{ dev: number; ino: number }>;
}

export function dataDirGuard(dataDir: string): Protected {
  // The data dir's and its files' identities, looked up at most once a second: a file tool
  // call costs two fstat calls, not nine stat calls (the identities of an open journal and
  // token do not change; daemon.json and config.json are re-read within a second).
  let cached: Identities | null = null;
  let pending: Promise<Identities> | null = null;
  /** The identities when a lookup at most IDENTITY_TTL_MS old is at hand. */
  const fresh = (): Identities | null => (cached && Date.now() - cached.at < IDENTITY_TTL_MS ? cached : null);
  const lookUp = (): Promise<Identities> =>
    (pending ??= (async () => {
      const [homeReal, [home, ...files]] = await Promise.all([
        realpath(dataDir).catch(() => ''),
        Promise.all([dataDir, ...DAEMON_FILES.map((f) => join(dataDir, f))].map((p) => stat(p).catch(() => null))),
      ]);
      cached = { at: Date.now(), home: home ?? null, homeReal, own: files.filter((f) => f !== null) };
      pending = null;
      return cached;
    })());
  /**
   * The verdict on an opened file (`opened`: its fstat) given whether it is named as one of
   * the daemon's files in the data dir: the data dir itself is not protected (listing it
   * shows names only); a daemon file is, by name or by identity anywhere.
   */
  const verdict = (ids: Identities, opened: Stats, named: boolean): boolean => {
    if (!ids.home || same(opened, ids.home)) return false;
    return named || ids.own.some((s) => same(s, opened));
  };
  // fstat of an open descriptor answers from its inode at once.
  const byReal = (ids: Identities, real: string, fd: number): boolean =>
    verdict(ids, fstatSync(fd), dirname(real) === ids.homeReal && DAEMON_FILES.includes(basename(real)));
  return {
    async isProtected(dirFd: number, name: string, fd: number): Promise<boolean> {
      const ids = fresh() ?? (await lookUp());
      const named = ids.home !== null && same(fstatSync(dirFd), ids.home) && DAEMON_FILES.includes(name);
      return verdict(ids, fstatSync(fd), named);
    },
    isProtectedReal(real: string, fd: number): boolean | Promise<boolean> {
      const ids = fresh();
      return ids ? byReal(ids, real, fd) : lookUp().then((i) => byReal(i, real, fd));
    },
  };
}
