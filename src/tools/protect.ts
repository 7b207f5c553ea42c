/**
 * The daemon's own files — token, journal, configuration, daemon.json in the data dir —
 * are never opened by a file tool, even when the data dir lies inside a session's cwd:
 * refused by name in the data dir (also when they do not exist yet) and by identity
 * (device and inode), so a hard link or a bind mount elsewhere is refused too.
 */
import type { FileHandle } from 'node:fs/promises';
import { stat } from 'node:fs/promises';
import { join } from 'node:path';
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

export function dataDirGuard(dataDir: string): Protected {
  return {
    async isProtected(dir: FileHandle, name: string, file: FileHandle): Promise<boolean> {
      const home = await stat(dataDir).catch(() => null);
      if (!home) return false;
      const [parent, opened] = await Promise.all([dir.stat(), file.stat()]);
      if (same(opened, home)) return false; // listing the data dir itself shows names only
      if (same(parent, home) && DAEMON_FILES.includes(name)) return true;
      const own = await Promise.all(DAEMON_FILES.map((f) => stat(join(dataDir, f)).catch(() => null)));
      return own.some((s) => s !== null && same(s, opened));
    },
  };
}
