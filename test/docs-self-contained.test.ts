/**
 * The repository is self-contained: no file a user can read (README, docs/, code,
 * messages, tests) sends the reader to a path outside the repository, such as a
 * specification that lives beside the checkout, and every relative Markdown link
 * resolves to a file inside the repository.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { dirname, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const self = relative(root, fileURLToPath(import.meta.url));

/** Files tracked or about to be (untracked but not ignored), text only. */
function repositoryFiles(): string[] {
  const out = execFileSync('git', ['ls-files', '--cached', '--others', '--exclude-standard'], { cwd: root, encoding: 'utf8' });
  return out.split('\n').filter((f) => f !== '' && f !== self && existsSync(resolve(root, f)) && /\.(md|ts|tsx|js|mjs|cjs|json|css|html|sh)$|(^|\/)run$/.test(f) && !f.endsWith('package-lock.json'));
}

// The names are built from pieces so that this file names no outside path itself.
const OUTSIDE = ['sh', 'ared'].join('');
const SPEC_FILE = new RegExp(['run', 'time', '\\.md'].join(''));
const SHARED_DIR = new RegExp(['\\.\\./', OUTSIDE, '(/|\\b)'].join(''));
const SPEC_DIR = new RegExp([OUTSIDE, '/sp', 'ec'].join(''));

/** Offending lines of one text, as `file:line: text`. */
export function outsideReferences(file: string, text: string): string[] {
  const found: string[] = [];
  text.split('\n').forEach((line, i) => {
    if (SPEC_FILE.test(line) || SHARED_DIR.test(line) || SPEC_DIR.test(line)) found.push(`${file}:${i + 1}: ${line.trim()}`);
  });
  if (file.endsWith('.md')) {
    for (const m of text.matchAll(/\]\(([^)#\s]+)(?:#[^)]*)?\)/g)) {
      const target = m[1]!;
      if (/^[a-z][a-z0-9+.-]*:/i.test(target)) continue; // http:, mailto: …
      const abs = resolve(root, dirname(file), target);
      if (relative(root, abs).startsWith('..')) found.push(`${file}: link outside the repository: ${target}`);
      else if (!existsSync(abs)) found.push(`${file}: broken link: ${target}`);
    }
  }
  return found;
}

describe('the repository is self-contained', () => {
  it('detects a reference to a path outside the repository', () => {
    expect(outsideReferences('docs/x.md', `see \`../${OUTSIDE}/sp` + `ec/run` + 'time.md` §8')).toHaveLength(1);
    expect(outsideReferences('src/x.ts', '/** (' + 'runtime' + '.md §14) */')).toHaveLength(1);
    expect(outsideReferences('docs/x.md', '[spec](../../outside.md)')).toHaveLength(1);
    expect(outsideReferences('docs/x.md', '[gone](missing-page.md)')).toHaveLength(1);
    expect(outsideReferences('docs/x.md', '[ok](protocol.md) and [web](https://example.com/a)')).toEqual([]);
  });

  it('no file of the repository refers outside it, and every relative link resolves', () => {
    const files = repositoryFiles();
    expect(files.length).toBeGreaterThan(50);
    const found = files.flatMap((f) => outsideReferences(f, readFileSync(resolve(root, f), 'utf8')));
    expect(found).toEqual([]);
  });
});
