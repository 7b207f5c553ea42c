/**
 * Path confinement for the file tools: a path the model names must stay inside the
 * session's working directory, lexically (`..`, absolute paths) and physically
 * (symlinks are resolved with realpath, also for the nearest existing parent of a path
 * that does not exist yet).
 */
import { lstatSync, realpathSync } from 'node:fs';
import { basename, dirname, isAbsolute, join, relative, resolve, sep } from 'node:path';

export type Confined = { ok: true; path: string } | { ok: false; reason: string };

/** True when `child` is `root` or lies below it (both absolute, normalised). */
function within(root: string, child: string): boolean {
  const rel = relative(root, child);
  return rel === '' || (rel !== '..' && !rel.startsWith(`..${sep}`) && !isAbsolute(rel));
}

/**
 * Resolves `path` (relative to `cwd`, or absolute) to a real absolute path inside `cwd`.
 * The returned path has every existing component resolved through realpath; components
 * that do not exist yet are appended unchanged. Never throws.
 */
export function resolveInside(cwd: string, path: string): Confined {
  if (typeof path !== 'string' || path === '') return { ok: false, reason: 'path must be a non-empty string' };
  if (path.includes('\0')) return { ok: false, reason: 'path must not contain NUL bytes' };
  let root: string;
  try {
    root = realpathSync(cwd);
  } catch {
    return { ok: false, reason: `the working directory ${cwd} does not exist` };
  }
  const outside = { ok: false, reason: `${path} is outside the working directory; only paths inside ${cwd} are allowed` } as const;
  const lexical = resolve(cwd, path);
  // An absolute path may name cwd by its symlinked or its real spelling.
  if (!within(resolve(cwd), lexical) && !within(root, lexical)) return outside;

  // Walk up to the nearest existing component and resolve it physically.
  const tail: string[] = [];
  let probe = lexical;
  for (;;) {
    let exists = true;
    try {
      lstatSync(probe);
    } catch {
      exists = false;
    }
    if (exists) break;
    const parent = dirname(probe);
    if (parent === probe) return outside;
    tail.unshift(basename(probe));
    probe = parent;
  }
  let real: string;
  try {
    real = realpathSync(probe);
  } catch {
    return { ok: false, reason: `${path} goes through a broken symbolic link` };
  }
  if (!within(root, real)) return { ok: false, reason: `${path} resolves (through a symbolic link) outside the working directory` };
  return { ok: true, path: tail.length ? join(real, ...tail) : real };
}
