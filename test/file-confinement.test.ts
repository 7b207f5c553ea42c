/**
 * File-tool confinement under attack, on real files and a real racing process: symlinks
 * swapped between check and open, huge paths, FIFOs, and the daemon's own files inside a
 * session's cwd.
 */
import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { existsSync, linkSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { parseConfig } from '../src/config/config.js';
import { MAX_PATH_BYTES } from '../src/tools/confine.js';
import { createFileTools } from '../src/tools/files.js';
import { createTools } from '../src/tools/index.js';
import type { ToolContext } from '../src/tools/types.js';

let cwd: string;
let outside: string;
let ctx: ToolContext;
let swapper: ChildProcess | null = null;
const [readFileTool, writeFileTool, listDirTool] = createFileTools();

beforeEach(() => {
  cwd = mkdtempSync(join(tmpdir(), 'agentd-confine-'));
  outside = mkdtempSync(join(tmpdir(), 'agentd-outside-'));
  ctx = { cwd, signal: new AbortController().signal, onOutput: () => {} };
});
afterEach(() => {
  swapper?.kill('SIGKILL');
  swapper = null;
  // rm(1): the tests nest directories deeper than fs.rmSync can recurse.
  execFileSync('rm', ['-rf', cwd, outside]);
});

/**
 * A separate process that, as fast as it can, makes `link` alternately the real entry
 * `real` (a directory or file, moved into place) and a symbolic link to `target` outside.
 */
async function swapLink(link: string, real: string, target: string): Promise<void> {
  const script = `
    const { symlinkSync, renameSync, rmSync } = require('node:fs');
    const [link, real, target] = process.argv.slice(1);
    let flips = 0;
    for (;;) {
      try { rmSync(link, { force: true }); renameSync(real, link); } catch {}
      try { renameSync(link, real); symlinkSync(target, link); } catch {}
      if (++flips === 100) process.stdout.write('go\\n');
    }`;
  swapper = spawn(process.execPath, ['-e', script, link, real, target], { stdio: ['ignore', 'pipe', 'inherit'] });
  await new Promise<void>((resolve) => swapper!.stdout!.once('data', () => resolve()));
}

describe('symlink swapped between check and open', () => {
  it('read_file never returns an outside file (3000 calls, directory and final component swapped)', async () => {
    mkdirSync(join(cwd, 'in'));
    writeFileSync(join(cwd, 'in/secret.txt'), 'inside');
    writeFileSync(join(cwd, 'in.txt'), 'inside');
    writeFileSync(join(outside, 'secret.txt'), 'OUTSIDE');
    await swapLink(join(cwd, 'dir'), join(cwd, 'in'), outside);
    const outcomes = { inside: 0, refused: 0, leaked: 0 };
    for (let i = 0; i < 3000; i++) {
      const r = await readFileTool.run({ path: 'dir/secret.txt' }, ctx);
      if (r.output.includes('OUTSIDE')) outcomes.leaked++;
      else if (r.status === 'ok') outcomes.inside++;
      else outcomes.refused++;
    }
    swapper!.kill('SIGKILL');
    expect(outcomes.leaked).toBe(0);
    // Both sides of the race were hit: the test exercised it.
    expect(outcomes.inside).toBeGreaterThan(0);
    expect(outcomes.refused).toBeGreaterThan(0);

    await swapLink(join(cwd, 'file'), join(cwd, 'in.txt'), join(outside, 'secret.txt'));
    let leaked = 0;
    for (let i = 0; i < 1500; i++) if ((await readFileTool.run({ path: 'file' }, ctx)).output.includes('OUTSIDE')) leaked++;
    expect(leaked).toBe(0);
  });

  it('write_file never creates or changes a file outside (2000 calls)', async () => {
    mkdirSync(join(cwd, 'in'));
    writeFileSync(join(outside, 'target.txt'), 'untouched');
    await swapLink(join(cwd, 'dir'), join(cwd, 'in'), outside);
    for (let i = 0; i < 1000; i++) await writeFileTool.run({ path: `dir/new-${i % 50}/f.txt`, content: 'pwned' }, ctx);
    for (let i = 0; i < 500; i++) await writeFileTool.run({ path: 'dir/target.txt', content: 'pwned' }, ctx);
    swapper!.kill('SIGKILL');
    writeFileSync(join(cwd, 't.txt'), 'inside');
    await swapLink(join(cwd, 'file'), join(cwd, 't.txt'), join(outside, 'target.txt'));
    for (let i = 0; i < 500; i++) await writeFileTool.run({ path: 'file', content: 'pwned' }, ctx);
    swapper!.kill('SIGKILL');
    expect(readdirSync(outside)).toEqual(['target.txt']);
    expect(readFileSync(join(outside, 'target.txt'), 'utf8')).toBe('untouched');
  });
});

describe('path length and cost', () => {
  it('refuses a path over 4096 bytes at once, and walks a long one in linear time', async () => {
    let t0 = Date.now();
    const huge = await readFileTool.run({ path: 'a/'.repeat(100_000) }, ctx);
    expect(huge).toEqual({ status: 'error', output: `refused: path is longer than ${MAX_PATH_BYTES} bytes` });
    expect((await writeFileTool.run({ path: 'a/'.repeat(100_000) + 'x', content: 'x' }, ctx)).status).toBe('error');
    expect(Date.now() - t0).toBeLessThan(200);

    // Just under the cap: 2 000 nested directories are created and read back (no PATH_MAX trouble).
    const deep = 'd/'.repeat(2000) + 'f.txt';
    expect(Buffer.byteLength(deep)).toBeLessThanOrEqual(MAX_PATH_BYTES);
    t0 = Date.now();
    expect((await writeFileTool.run({ path: deep, content: 'deep' }, ctx)).status).toBe('ok');
    expect(await readFileTool.run({ path: deep }, ctx)).toEqual({ status: 'ok', output: 'deep' });
    expect((await readFileTool.run({ path: 'd/'.repeat(2000) + 'missing' }, ctx)).output).toMatch(/no such file/);
    expect(Date.now() - t0).toBeLessThan(10_000);
  });

  it('does not block the event loop while walking', async () => {
    let ticks = 0;
    const timer = setInterval(() => ticks++, 1);
    const t0 = Date.now();
    await readFileTool.run({ path: 'x/'.repeat(2040) + 'y' }, ctx);
    await writeFileTool.run({ path: 'e/'.repeat(1500) + 'f', content: 'x' }, ctx);
    clearInterval(timer);
    // The loop kept turning: no single synchronous stretch took the whole time.
    expect(ticks).toBeGreaterThan(Math.min(5, (Date.now() - t0) / 20));
  });
});

describe('non-regular files', () => {
  it('write_file and read_file refuse FIFOs without blocking; other reads go on', async () => {
    const fifos = ['f1', 'f2', 'f3', 'f4', 'f5', 'f6'].map((f) => join(cwd, f));
    for (const f of fifos) execFileSync('mkfifo', [f]);
    writeFileSync(join(cwd, 'plain.txt'), 'plain');
    const t0 = Date.now();
    const results = await Promise.race([
      Promise.all([
        ...fifos.map((f, i) => writeFileTool.run({ path: `f${i + 1}`, content: 'x' }, ctx)),
        ...fifos.map((f, i) => readFileTool.run({ path: `f${i + 1}` }, ctx)),
        readFileTool.run({ path: 'plain.txt' }, ctx),
      ]),
      new Promise<'hung'>((r) => setTimeout(() => r('hung'), 5000)),
    ]);
    expect(results).not.toBe('hung');
    expect(Date.now() - t0).toBeLessThan(2000);
    const all = results as Array<{ status: string; output: string }>;
    for (const r of all.slice(0, -1)) expect(r).toMatchObject({ status: 'error', output: expect.stringMatching(/not a regular file/) });
    expect(all.at(-1)).toEqual({ status: 'ok', output: 'plain' });
  });

  it('refuses a FIFO with a reader waiting, and device files', async () => {
    execFileSync('mkfifo', [join(cwd, 'p')]);
    const reader = spawn('cat', [join(cwd, 'p')], { stdio: ['ignore', 'pipe', 'ignore'] });
    try {
      await new Promise((r) => setTimeout(r, 100));
      expect((await writeFileTool.run({ path: 'p', content: 'x' }, ctx)).output).toMatch(/not a regular file/);
    } finally {
      reader.kill('SIGKILL');
    }
    symlinkSync('/dev/zero', join(cwd, 'zero'));
    expect((await readFileTool.run({ path: 'zero' }, ctx)).status).toBe('error');
  });
});

describe("the daemon's own files", () => {
  it('are refused even when the data dir lies inside the cwd, by name, link or hard link', async () => {
    const dataDir = join(cwd, '.agentd');
    mkdirSync(dataDir);
    for (const f of ['token', 'daemon.json', 'agentd.db']) writeFileSync(join(dataDir, f), `secret ${f}`);
    writeFileSync(join(dataDir, 'notes.txt'), 'mine');
    const [read, write, list] = createFileTools({ dataDir });
    linkSync(join(dataDir, 'token'), join(cwd, 'hard-token'));
    symlinkSync(join(dataDir, 'token'), join(cwd, 'soft-token'));
    for (const path of ['.agentd/token', '.agentd/daemon.json', '.agentd/agentd.db', 'hard-token', 'soft-token', join(dataDir, 'token')]) {
      const r = await read.run({ path }, ctx);
      expect(r.status, path).toBe('error');
      expect(r.output, path).toMatch(/daemon's own files/);
    }
    for (const path of ['.agentd/token', '.agentd/config.json', '.agentd/agentd.db-wal', 'hard-token']) {
      expect((await write.run({ path, content: 'pwned' }, ctx)).output, path).toMatch(/daemon's own files/);
    }
    expect(readFileSync(join(dataDir, 'token'), 'utf8')).toBe('secret token');
    expect(existsSync(join(dataDir, 'config.json'))).toBe(false);
    expect(existsSync(join(dataDir, 'agentd.db-wal'))).toBe(false);
    // Other files there, and the listing, are not the daemon's.
    expect(await read.run({ path: '.agentd/notes.txt' }, ctx)).toEqual({ status: 'ok', output: 'mine' });
    expect((await list.run({ path: '.agentd' }, ctx)).status).toBe('ok');

    // The host's toolset protects its data dir.
    const toolset = createTools(parseConfig({}), { dataDir });
    expect((await toolset.tools.get('read_file')!.run({ path: '.agentd/token' }, ctx)).output).toMatch(/daemon's own files/);
    await toolset.close();
  });

  it('list_dir still refuses escapes and works on the root', async () => {
    symlinkSync(outside, join(cwd, 'out'));
    expect((await listDirTool.run({ path: 'out' }, ctx)).output).toMatch(/symbolic link/);
    expect((await listDirTool.run({ path: '.' }, ctx)).output).toBe('out@');
  });
});
