/**
 * Project instructions (docs/context.md): the `AGENTS.md` of a session's cwd, or of its
 * nearest parent directory that has one, appended to every model call's system prompt
 * under the heading PROJECT_INSTRUCTIONS_HEADING. Its first PROJECT_INSTRUCTIONS_MAX_BYTES
 * are kept, then a marker. The file is stat'ed on each call and re-read when its
 * identity, size or modification time changed.
 */
import { closeSync, fstatSync, openSync, readSync, statSync } from 'node:fs';
import { dirname, join } from 'node:path';

export const PROJECT_INSTRUCTIONS_FILE = 'AGENTS.md';
export const PROJECT_INSTRUCTIONS_HEADING = 'Project instructions (AGENTS.md)';
export const PROJECT_INSTRUCTIONS_MAX_BYTES = 64 * 1024;

interface Cached {
  key: string;
  text: string | null;
}

/** By cwd: where the file was found and what it said. */
const cache = new Map<string, Cached>();
const CACHE_MAX = 1024;

/** The nearest AGENTS.md for `cwd` and its stat key, or null. */
function locate(cwd: string): { path: string; key: string } | null {
  for (let dir = cwd; ; dir = dirname(dir)) {
    const path = join(dir, PROJECT_INSTRUCTIONS_FILE);
    try {
      const st = statSync(path);
      if (st.isFile()) return { path, key: `${path}:${st.dev}:${st.ino}:${st.size}:${st.mtimeMs}:${st.ctimeMs}` };
    } catch {
      /* none here */
    }
    if (dirname(dir) === dir) return null;
  }
}

function read(path: string): string | null {
  let fd: number;
  try {
    fd = openSync(path, 'r');
  } catch {
    return null;
  }
  try {
    const size = fstatSync(fd).size;
    const buf = Buffer.alloc(Math.min(size, PROJECT_INSTRUCTIONS_MAX_BYTES));
    const n = readSync(fd, buf, 0, buf.length, 0);
    // A multi-byte character cut by the bound is dropped (TextDecoder would show U+FFFD).
    let text = buf.subarray(0, n).toString('utf8').replace(/\uFFFD$/, '');
    if (size > PROJECT_INSTRUCTIONS_MAX_BYTES) text += `\n[AGENTS.md cut: only its first ${PROJECT_INSTRUCTIONS_MAX_BYTES / 1024} KiB of ${size} bytes are shown]`;
    return text.trim() === '' ? null : text;
  } finally {
    closeSync(fd);
  }
}

/** The project instructions for a session in `cwd`, or null when there are none. */
export function projectInstructions(cwd: string): string | null {
  const found = locate(cwd);
  if (!found) {
    cache.delete(cwd);
    return null;
  }
  const hit = cache.get(cwd);
  if (hit && hit.key === found.key) return hit.text;
  const text = read(found.path);
  if (cache.size >= CACHE_MAX) cache.clear();
  cache.set(cwd, { key: found.key, text });
  return text;
}

/** `prompt` with the project instructions of `cwd` appended (or unchanged). */
export function withProjectInstructions(prompt: string, cwd: string): string {
  const text = projectInstructions(cwd);
  return text === null ? prompt : `${prompt}\n\n# ${PROJECT_INSTRUCTIONS_HEADING}\n\n${text}`;
}
