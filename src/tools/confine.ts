/**
 * Race-free path confinement for the file tools: a path the model names is opened inside
 * the session's working directory one component at a time, each relative to the directory
 * descriptor opened before it (`/proc/self/fd/N/NAME`) and with O_NOFOLLOW, so the kernel
 * never follows a link we did not check. A symbolic link is read and its target walked the
 * same way (an absolute one only if it lies inside the root); `..` never climbs above the
 * root. The opened descriptor's real path (/proc/self/fd/N) is checked once more, so a
 * directory renamed out of the root mid-walk is refused too. Opening never blocks
 * (O_NONBLOCK: FIFOs, devices) and only regular files (or directories for listing) are
 * accepted. Paths are capped at MAX_PATH_BYTES and walked in linear time. Linux only.
 */
import { closeSync, constants, open as openFd, readlinkSync } from 'node:fs';
import { type FileHandle, lstat, mkdir, open, readlink, realpath, unlink } from 'node:fs/promises';
import { isAbsolute, relative, resolve, sep } from 'node:path';

/** Longest path argument accepted, in UTF-8 bytes (Linux PATH_MAX). */
export const MAX_PATH_BYTES = 4096;
/** Symbolic links followed in one path at most (as the kernel's MAXSYMLINKS). */
const MAX_LINKS = 40;

const { O_RDONLY, O_WRONLY, O_CREAT, O_EXCL, O_DIRECTORY, O_NOFOLLOW, O_NONBLOCK, O_NOCTTY } = constants;
const DIR_FLAGS = O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_NONBLOCK;

/** What the caller wants to open: a file to read, a file to write (parents created), a directory. */
export type OpenMode = 'read' | 'write' | 'dir';

/** The daemon's files a tool must never open, even inside a session's cwd. */
export interface Protected {
  /** True when the file opened (descriptor `fd`) as `name` in directory `dirFd` is one of the daemon's own. */
  isProtected(dirFd: number, name: string, fd: number): Promise<boolean>;
  /** The same, for a file known by its real path `real` (the descriptor's, from /proc); answered at once when it can be. */
  isProtectedReal(real: string, fd: number): boolean | Promise<boolean>;
}

export interface Opened {
  /** The open descriptor: what the tool reads, writes or lists. Valid until `close()`. */
  fd: number;
  /** The descriptor's real path (inside the root). */
  real: string;
  /** Whether write mode created the file. */
  created: boolean;
  /** Close the descriptor (the caller does, exactly once). */
  close(): void | Promise<void>;
}

export type Confined = { ok: true; opened: Opened } | { ok: false; reason: string; code?: string };

/** True when `child` is `root` or lies below it (both absolute, normalised). */
export function within(root: string, child: string): boolean {
  const rel = relative(root, child);
  return rel === '' || (rel !== '..' && !rel.startsWith(`..${sep}`) && !isAbsolute(rel));
}

const at = (dir: FileHandle, name: string) => `/proc/self/fd/${dir.fd}/${name}`;
const errno = (err: unknown) => (err as NodeJS.ErrnoException)?.code;

/** Real paths of recent working directories, reused for a second (one lookup fewer per call). */
const roots = new Map<string, { real: string; at: number }>();
const ROOT_TTL_MS = 1000;

/**
 * The real path of `cwd`: a string when a lookup at most a second old is at hand, else a
 * promise of one. A cached value is only ever the prefix every opened descriptor is checked
 * against, so a stale one confines to what the working directory really was a moment ago,
 * never to somewhere else.
 */
function realRoot(cwd: string): string | Promise<string> {
  const hit = roots.get(cwd);
  const now = Date.now();
  if (hit && now - hit.at < ROOT_TTL_MS) return hit.real;
  return realpath(cwd).then((real) => {
    if (roots.size >= 256) roots.clear();
    roots.set(cwd, { real, at: now });
    return real;
  });
}

/** Components of `abs` below the root (spelled as `cwd` or as its real path), or null when outside. */
function below(cwd: string, root: string, abs: string): string[] | null {
  const base = within(root, abs) ? root : within(resolve(cwd), abs) ? resolve(cwd) : null;
  if (base === null) return null;
  return relative(base, abs).split(sep).filter((c) => c !== '' && c !== '.');
}

/**
 * Open `path` (relative to `cwd`, or absolute inside it) for `mode`. Never throws for a
 * refusal or an I/O failure: those come back as `{ok: false}` with a reason (and the errno
 * code when there is one). The caller closes the handle.
 */
export async function openInside(cwd: string, path: unknown, mode: OpenMode, guard?: Protected): Promise<Confined> {
  if (typeof path !== 'string' || path === '') return { ok: false, reason: 'path must be a non-empty string' };
  if (path.includes('\0')) return { ok: false, reason: 'path must not contain NUL bytes' };
  if (Buffer.byteLength(path) > MAX_PATH_BYTES) return { ok: false, reason: `path is longer than ${MAX_PATH_BYTES} bytes` };
  let root: string;
  try {
    const known = realRoot(cwd);
    root = typeof known === 'string' ? known : await known;
  } catch {
    return { ok: false, reason: `the working directory ${cwd} does not exist` };
  }
  const parts = below(cwd, root, resolve(cwd, path));
  if (!parts) return { ok: false, reason: `${path} is outside the working directory; only paths inside ${cwd} are allowed` };
  if (mode !== 'write' && parts.length > 0) {
    const fast = await openDirect(root, parts, mode, guard);
    if (fast) return { ok: true, opened: fast };
  }
  let rootFd: FileHandle;
  try {
    rootFd = await open(root, DIR_FLAGS);
  } catch {
    return { ok: false, reason: `the working directory ${cwd} does not exist` };
  }
  const viaLink = { ok: false, reason: `${path} resolves (through a symbolic link) outside the working directory` } as const;
  // Components still to walk, last first (a link's target is pushed in front in O(1) per component).
  const pending = parts.reverse();
  let dir = rootFd;
  let depth = 0; // components of `dir` below the root
  let links = 0;
  const enter = async (next: FileHandle) => {
    if (dir !== rootFd) await dir.close();
    dir = next;
  };
  /** Replace the link at `dir/name` by its target's components; a reason when it may not be followed. */
  const follow = async (name: string): Promise<string | null> => {
    if (++links > MAX_LINKS) return `${path}: too many levels of symbolic links`;
    const target = await readlink(at(dir, name));
    if (isAbsolute(target)) {
      const inside = below(cwd, root, resolve(target));
      if (!inside) return viaLink.reason;
      await enter(rootFd);
      depth = 0;
      pending.push(...inside.reverse());
    } else {
      pending.push(...target.split('/').filter((c) => c !== '' && c !== '.').reverse());
    }
    return null;
  };
  const isLink = async (name: string) => (await lstat(at(dir, name)).catch(() => null))?.isSymbolicLink() ?? false;
  let name: string | null = null;
  let handle: FileHandle | null = null;
  let created = false;
  try {
    while (pending.length > 0) {
      const c = pending.pop()!;
      if (c === '..') {
        if (depth === 0) return viaLink;
        await enter(await open(at(dir, '..'), DIR_FLAGS));
        depth--;
        continue;
      }
      const last = pending.length === 0;
      if (!last || mode === 'dir') {
        try {
          const next = await open(at(dir, c), DIR_FLAGS);
          if (last) {
            handle = next;
            name = c;
          } else {
            await enter(next);
            depth++;
          }
          continue;
        } catch (err) {
          const code = errno(err);
          if ((code === 'ELOOP' || code === 'ENOTDIR') && (await isLink(c))) {
            const why = await follow(c);
            if (why) return { ok: false, reason: why };
            continue;
          }
          if (code === 'ENOENT' && mode === 'write') {
            await mkdir(at(dir, c)).catch((e: unknown) => (errno(e) === 'EEXIST' ? undefined : Promise.reject(e)));
            pending.push(c);
            continue;
          }
          throw err;
        }
      }
      // The last component of a file path.
      const flags = mode === 'read' ? O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY : O_WRONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY;
      try {
        if (mode === 'write') {
          try {
            handle = await open(at(dir, c), flags | O_CREAT | O_EXCL, 0o666);
            created = true;
          } catch (err) {
            if (errno(err) !== 'EEXIST') throw err;
            handle = await open(at(dir, c), flags);
          }
        } else {
          handle = await open(at(dir, c), flags);
        }
        name = c;
      } catch (err) {
        if (errno(err) === 'ELOOP' && (await isLink(c))) {
          const why = await follow(c);
          if (why) return { ok: false, reason: why };
          continue;
        }
        if (errno(err) === 'ENXIO') return { ok: false, reason: `${path} is not a regular file` };
        throw err;
      }
    }
    if (!handle || name === null) {
      // The path names the root (or climbed back to it).
      if (mode !== 'dir') return { ok: false, reason: `${path} is a directory`, code: 'EISDIR' };
      handle = await open(at(dir, '.'), DIR_FLAGS);
      name = '.';
    }
    const refuse = async (reason: string): Promise<Confined> => {
      if (created) await unlink(at(dir, name!)).catch(() => {});
      await handle?.close();
      handle = null;
      return { ok: false, reason };
    };
    const real = await readlink(`/proc/self/fd/${handle.fd}`);
    if (!within(root, real)) return await refuse(viaLink.reason);
    if (guard && (await guard.isProtected(dir.fd, name, handle.fd))) {
      return await refuse(`${path} is one of the daemon's own files (token, journal, configuration); it is never opened by a tool`);
    }
    const owned: FileHandle = handle;
    handle = null; // handed over to the caller
    return { ok: true, opened: { fd: owned.fd, real, created, close: () => owned.close() } };
  } catch (err) {
    await handle?.close().catch(() => {});
    return { ok: false, reason: (err as Error).message, ...(errno(err) && { code: errno(err)! }) };
  } finally {
    if (dir !== rootFd) await dir.close().catch(() => {});
    await rootFd.close().catch(() => {});
  }
}

/** open(2) through the thread pool, answering the bare descriptor (no FileHandle to close asynchronously). */
const openDescriptor = (path: string, flags: number) =>
  new Promise<number>((resolve, reject) => openFd(path, flags, (err, fd) => (err ? reject(err) : resolve(fd))));

/**
 * The common case in one open: a path to read or list whose components are plain names
 * (`..` was resolved lexically) is opened directly, the kernel following any directory
 * links, and accepted only when the descriptor's real path lies inside the root and is not
 * one of the daemon's files — the descriptor is what is read, so a link swapped after the
 * open changes nothing. Null (and the careful walk) for anything else: a final link, a
 * missing file, a path that resolves outside, so refusals get their exact reason.
 * The descriptor is a bare one, closed synchronously (close(2) of a descriptor opened
 * only to read or list returns at once): one thread-pool round trip per call, not two.
 */
async function openDirect(root: string, parts: string[], mode: 'read' | 'dir', guard: Protected | undefined): Promise<Opened | null> {
  let fd = -1;
  try {
    fd = await openDescriptor(`${root}${sep}${parts.join(sep)}`, mode === 'dir' ? DIR_FLAGS : O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY);
    // /proc/self/fd is kernel memory: read at once, without a thread-pool round trip.
    const real = readlinkSync(`/proc/self/fd/${fd}`);
    const guarded = guard ? guard.isProtectedReal(real, fd) : false;
    if (!within(root, real) || (typeof guarded === 'boolean' ? guarded : await guarded)) {
      closeSync(fd);
      return null;
    }
    const opened = fd;
    let open = true;
    return {
      fd: opened,
      real,
      created: false,
      close: () => {
        if (open) closeSync(opened);
        open = false;
      },
    };
  } catch {
    if (fd >= 0) {
      try {
        closeSync(fd);
      } catch {
        /* already closed */
      }
    }
    return null;
  }
}
