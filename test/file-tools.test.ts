import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, realpathSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { openInside } from '../src/tools/confine.js';
import { fileTools, listDirTool, READ_FILE_CAP_BYTES, readFileTool, SYNC_READ_BYTES, writeFileTool } from '../src/tools/files.js';
import type { ToolContext } from '../src/tools/types.js';

let cwd: string;
let outside: string;
let ctx: ToolContext;

beforeEach(() => {
  cwd = mkdtempSync(join(tmpdir(), 'agentd-files-'));
  outside = mkdtempSync(join(tmpdir(), 'agentd-outside-'));
  ctx = { cwd, signal: new AbortController().signal, onOutput: () => {} };
});
afterEach(() => {
  rmSync(cwd, { recursive: true, force: true });
  rmSync(outside, { recursive: true, force: true });
});

describe('file tools inside cwd', () => {
  it('exports the three tools; only write_file needs approval', () => {
    expect(fileTools.map((t) => [t.spec.name, t.needsApproval])).toEqual([
      ['read_file', false],
      ['write_file', true],
      ['list_dir', false],
    ]);
  });

  it('writes, reads and lists', async () => {
    const w = await writeFileTool.run({ path: 'sub/dir/a.txt', content: 'héllo\n' }, ctx);
    expect(w.status).toBe('ok');
    expect(readFileSync(join(cwd, 'sub/dir/a.txt'), 'utf8')).toBe('héllo\n');
    expect(await readFileTool.run({ path: 'sub/dir/a.txt' }, ctx)).toEqual({ status: 'ok', output: 'héllo\n' });
    // An absolute path inside cwd is fine.
    expect((await readFileTool.run({ path: join(cwd, 'sub/dir/a.txt') }, ctx)).output).toBe('héllo\n');

    writeFileSync(join(cwd, 'b.txt'), 'b');
    mkdirSync(join(cwd, 'a-dir'));
    expect(await listDirTool.run({ path: '.' }, ctx)).toEqual({ status: 'ok', output: 'a-dir/\nb.txt\nsub/' });
    expect((await listDirTool.run({ path: 'sub/dir' }, ctx)).output).toBe('a.txt');
  });

  it('reports missing files, directories and bad arguments as error results', async () => {
    expect(await readFileTool.run({ path: 'nope.txt' }, ctx)).toMatchObject({ status: 'error', output: expect.stringContaining('no such file') });
    mkdirSync(join(cwd, 'd'));
    expect(await readFileTool.run({ path: 'd' }, ctx)).toMatchObject({ status: 'error', output: expect.stringContaining('directory') });
    expect((await writeFileTool.run({ path: 'x' }, ctx)).status).toBe('error');
    expect((await readFileTool.run({ path: 42 }, ctx)).status).toBe('error');
  });

  it('caps read_file output with a truncation note', async () => {
    writeFileSync(join(cwd, 'big.txt'), 'x'.repeat(READ_FILE_CAP_BYTES + 1000));
    const r = await readFileTool.run({ path: 'big.txt' }, ctx);
    expect(r.status).toBe('ok');
    expect(r.output.startsWith('x'.repeat(READ_FILE_CAP_BYTES))).toBe(true);
    expect(r.output).toContain(`[truncated: showing the first ${READ_FILE_CAP_BYTES} of ${READ_FILE_CAP_BYTES + 1000} bytes]`);
  });

  it('reads a file whole on either side of the synchronous-read size, multi-byte text intact', async () => {
    for (const size of [SYNC_READ_BYTES - 1, SYNC_READ_BYTES, SYNC_READ_BYTES + 1, 3 * SYNC_READ_BYTES]) {
      const text = 'é'.repeat(Math.floor(size / 2)) + (size % 2 ? 'x' : '');
      expect(Buffer.byteLength(text)).toBe(size);
      writeFileSync(join(cwd, 'f.txt'), text);
      expect(await readFileTool.run({ path: 'f.txt' }, ctx)).toEqual({ status: 'ok', output: text });
    }
  });

  it('closes every descriptor it opens, on success and on every refusal', async () => {
    writeFileSync(join(cwd, 'a.txt'), 'a');
    writeFileSync(join(cwd, 'big.txt'), 'x'.repeat(2 * SYNC_READ_BYTES));
    mkdirSync(join(cwd, 'd'));
    writeFileSync(join(outside, 'x'), 'secret');
    symlinkSync(join(outside, 'x'), join(cwd, 'out'));
    const open = () => readdirSync('/proc/self/fd').length;
    const before = open();
    for (let i = 0; i < 50; i++) {
      await readFileTool.run({ path: 'a.txt' }, ctx);
      await readFileTool.run({ path: 'big.txt' }, ctx);
      await readFileTool.run({ path: 'd' }, ctx);
      await readFileTool.run({ path: 'out' }, ctx);
      await readFileTool.run({ path: 'missing' }, ctx);
      await listDirTool.run({ path: 'd' }, ctx);
      await writeFileTool.run({ path: 'w.txt', content: `w${i}` }, ctx);
    }
    expect(readFileSync(join(cwd, 'w.txt'), 'utf8')).toBe('w49');
    expect(open()).toBe(before);
  });
});

describe('confinement', () => {
  it('refuses ../ escapes', async () => {
    writeFileSync(join(outside, 'x'), 'secret');
    const rel = join('..', outside.split('/').at(-1)!, 'x');
    for (const r of [
      await readFileTool.run({ path: rel }, ctx),
      await readFileTool.run({ path: '../x' }, ctx),
      await writeFileTool.run({ path: '../x', content: 'pwned' }, ctx),
      await listDirTool.run({ path: '..' }, ctx),
    ]) {
      expect(r.status).toBe('error');
      expect(r.output).toMatch(/outside the working directory/);
    }
    expect(readFileSync(join(outside, 'x'), 'utf8')).toBe('secret');
  });

  it('refuses absolute paths outside cwd', async () => {
    const r = await readFileTool.run({ path: '/etc/passwd' }, ctx);
    expect(r.status).toBe('error');
    expect(r.output).toMatch(/outside the working directory/);
    expect((await writeFileTool.run({ path: join(outside, 'new.txt'), content: 'x' }, ctx)).status).toBe('error');
    expect(existsSync(join(outside, 'new.txt'))).toBe(false);
  });

  it('refuses a symlink inside cwd that points to /etc', async () => {
    symlinkSync('/etc', join(cwd, 'etc'));
    for (const r of [
      await readFileTool.run({ path: 'etc/passwd' }, ctx),
      await listDirTool.run({ path: 'etc' }, ctx),
      await writeFileTool.run({ path: 'etc/agentd-test', content: 'x' }, ctx),
    ]) {
      expect(r.status).toBe('error');
      expect(r.output).toMatch(/symbolic link/);
    }
    // The link itself shows up in listings.
    expect((await listDirTool.run({ path: '.' }, ctx)).output).toBe('etc@');
  });

  it('refuses writing through a symlinked parent directory pointing outside', async () => {
    symlinkSync(outside, join(cwd, 'out'));
    const r = await writeFileTool.run({ path: 'out/deeper/new.txt', content: 'pwned' }, ctx);
    expect(r.status).toBe('error');
    expect(existsSync(join(outside, 'deeper'))).toBe(false);
    const r2 = await writeFileTool.run({ path: 'out/new.txt', content: 'pwned' }, ctx);
    expect(r2.status).toBe('error');
    expect(existsSync(join(outside, 'new.txt'))).toBe(false);
  });

  it('refuses a dangling symlink whose target would be created outside', async () => {
    symlinkSync(join(outside, 'created-by-write'), join(cwd, 'dangling'));
    const r = await writeFileTool.run({ path: 'dangling', content: 'pwned' }, ctx);
    expect(r.status).toBe('error');
    expect(existsSync(join(outside, 'created-by-write'))).toBe(false);
  });

  it('allows symlinks that stay inside cwd', async () => {
    mkdirSync(join(cwd, 'real'));
    writeFileSync(join(cwd, 'real/f.txt'), 'inside');
    symlinkSync(join(cwd, 'real'), join(cwd, 'alias'));
    expect(await readFileTool.run({ path: 'alias/f.txt' }, ctx)).toEqual({ status: 'ok', output: 'inside' });
  });

  it('openInside opens real paths inside and gives reasons outside', async () => {
    mkdirSync(join(cwd, 'a/b'), { recursive: true });
    const inside = await openInside(cwd, 'a/b', 'dir');
    expect(inside.ok && inside.opened.real).toBe(join(realpathSync(cwd), 'a/b'));
    if (inside.ok) await inside.opened.close();
    const root = await openInside(cwd, '.', 'dir');
    expect(root.ok && root.opened.real).toBe(realpathSync(cwd));
    if (root.ok) await root.opened.close();
    expect((await openInside(cwd, 'a/../../x', 'read')).ok).toBe(false);
    expect((await openInside(cwd, '', 'read')).ok).toBe(false);
    expect((await openInside(cwd, 'a\0b', 'read')).ok).toBe(false);
  });
});
