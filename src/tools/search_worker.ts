/**
 * The worker thread behind `glob` and `grep` (search.ts): walks a directory tree without
 * following symbolic links, skipping `.git`, what `.gitignore` files exclude (the `ignore`
 * library) and binary files, matches names with `picomatch` and lines with a JavaScript
 * regular expression, and posts one capped, sorted answer. The main thread terminates it
 * on timeout or interrupt, so a pathological expression never blocks the daemon.
 */
import { openSync, readSync, closeSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative, sep } from 'node:path';
import { parentPort, workerData } from 'node:worker_threads';
import ignore, { type Ignore } from 'ignore';
import picomatch from 'picomatch';

export interface SearchJob {
  op: 'glob' | 'grep';
  /** The session's cwd (real path): answers are relative to it, `.gitignore` files from it down. */
  root: string;
  /** Where to search (real path, inside root). */
  start: string;
  /** glob: the name pattern; grep: the regular expression source. */
  pattern: string;
  /** grep: only files whose path matches this glob. */
  glob?: string;
  ignoreCase?: boolean;
  maxEntries: number;
  maxBytes: number;
}

export type SearchAnswer = { ok: true; output: string } | { ok: false; output: string };

/** Bytes sniffed for a NUL to call a file binary. */
const SNIFF_BYTES = 8192;
/** Files larger than this are not searched by grep. */
const GREP_MAX_FILE_BYTES = 32 * 1024 * 1024;

interface Level {
  base: string;
  ig: Ignore;
}

function loadIgnore(dir: string, root: string): Level | null {
  try {
    const text = readFileSync(join(dir, '.gitignore'), 'utf8');
    return { base: relative(root, dir), ig: ignore().add(text) };
  } catch {
    return null;
  }
}

const toPosix = (p: string) => (sep === '/' ? p : p.split(sep).join('/'));

function ignored(levels: readonly Level[], rel: string, isDir: boolean): boolean {
  for (const { base, ig } of levels) {
    const sub = base === '' ? rel : rel.startsWith(base + '/') ? rel.slice(base.length + 1) : null;
    if (sub && ig.ignores(isDir ? sub + '/' : sub)) return true;
  }
  return false;
}

/** Every regular file under `start` not ignored, paths relative to root, sorted. */
function walk(job: SearchJob): string[] {
  const levels: Level[] = [];
  // .gitignore files from the root down to the start directory apply too.
  const parts = toPosix(relative(job.root, job.start)).split('/').filter(Boolean);
  for (let i = 0; i <= parts.length; i++) {
    const lv = loadIgnore(join(job.root, ...parts.slice(0, i)), job.root);
    if (lv) levels.push(lv);
  }
  const files: string[] = [];
  const visit = (dir: string) => {
    let entries;
    try {
      entries = readdirSync(dir, { withFileTypes: true });
    } catch {
      return;
    }
    for (const e of entries) {
      if (e.name === '.git') continue;
      const full = join(dir, e.name);
      const rel = toPosix(relative(job.root, full));
      if (e.isDirectory()) {
        if (ignored(levels, rel, true)) continue;
        const lv = loadIgnore(full, job.root);
        if (lv) levels.push(lv);
        visit(full);
        if (lv) levels.pop();
      } else if (e.isFile() && !ignored(levels, rel, false)) {
        files.push(rel);
      }
    }
  };
  visit(job.start);
  return files.sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
}

function binary(full: string): boolean {
  const fd = openSync(full, 'r');
  try {
    const buf = Buffer.alloc(SNIFF_BYTES);
    return buf.subarray(0, readSync(fd, buf, 0, SNIFF_BYTES, 0)).includes(0);
  } finally {
    closeSync(fd);
  }
}

/** Collects lines up to the caps, counting what did not fit. */
class Capped {
  private lines: string[] = [];
  private bytes = 0;
  private more = 0;
  constructor(private readonly job: SearchJob) {}
  push(line: string): void {
    const size = Buffer.byteLength(line) + 1;
    if (this.more > 0 || this.lines.length >= this.job.maxEntries || this.bytes + size > this.job.maxBytes) {
      this.more++;
      return;
    }
    this.lines.push(line);
    this.bytes += size;
  }
  text(what: string, none: string): string {
    if (this.lines.length === 0 && this.more === 0) return none;
    const note = this.more > 0 ? `\n[${this.more} more ${what} not shown: limit ${this.job.maxEntries} entries / ${this.job.maxBytes / 1024} KiB]` : '';
    return this.lines.join('\n') + note;
  }
}

const matcher = (pattern: string) => picomatch(pattern, { dot: true, matchBase: !pattern.includes('/') });

export function runSearch(job: SearchJob): SearchAnswer {
  const out = new Capped(job);
  if (job.op === 'glob') {
    const isMatch = matcher(job.pattern);
    for (const rel of walk(job)) {
      const fromStart = toPosix(relative(job.start, join(job.root, rel)));
      if (isMatch(fromStart)) out.push(rel);
    }
    return { ok: true, output: out.text('paths', 'no files matched') };
  }
  let re: RegExp;
  try {
    re = new RegExp(job.pattern, job.ignoreCase ? 'i' : '');
  } catch (err) {
    return { ok: false, output: `grep_invalid_regex: ${(err as Error).message}` };
  }
  const only = job.glob ? matcher(job.glob) : null;
  for (const rel of walk(job)) {
    const full = join(job.root, rel);
    if (only && !only(toPosix(relative(job.start, full)))) continue;
    try {
      if (statSync(full).size > GREP_MAX_FILE_BYTES || binary(full)) continue;
      const lines = readFileSync(full, 'utf8').split('\n');
      for (let i = 0; i < lines.length; i++) {
        const line = lines[i]!;
        if (re.test(line)) out.push(`${rel}:${i + 1}:${line.length > 500 ? line.slice(0, 500) + '…' : line}`);
      }
    } catch {
      /* unreadable: skipped */
    }
  }
  return { ok: true, output: out.text('matches', 'no matches') };
}

if (parentPort && workerData) {
  let answer: SearchAnswer;
  try {
    answer = runSearch(workerData as SearchJob);
  } catch (err) {
    answer = { ok: false, output: `search_failed: ${err instanceof Error ? err.message : String(err)}` };
  }
  parentPort.postMessage(answer);
}
