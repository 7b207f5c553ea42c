/** MCP over stdio with the real reference servers: list and call, filter, naming, media placeholders, cwd and env, server-filesystem. */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, test } from 'vitest';
import { byName, context, everythingServer, FILESYSTEM, fixtureServer, manager, removeWorkDirs, workDir } from './helpers/mcp.js';

afterAll(removeWorkDirs);

describe('MCP stdio servers', () => {
  test('server-everything: list and call round trip, schemas passed through, image placeholder', async () => {
    const cwd = workDir();
    const m = manager({ everything: everythingServer() });
    try {
      const set = m.toolset(cwd);
      expect(set.status()[0]).toMatchObject({ server: 'everything', state: 'idle', starts: 0 });
      const { tools, warnings } = await set.list();
      expect(warnings).toEqual([]);
      const names = tools.map((t) => t.spec.name);
      expect(names).toEqual(expect.arrayContaining(['everything__echo', 'everything__get-sum', 'everything__get-tiny-image', 'everything__trigger-long-running-operation']));
      const echo = byName(tools, 'everything__echo');
      expect(echo).toMatchObject({ server: 'everything', remoteName: 'echo', approval: 'session', needsApproval: true });
      expect(echo.spec.description).toBe('Echoes back the input string');
      expect(echo.spec.parameters).toMatchObject({ type: 'object', properties: { message: { type: 'string' } }, required: ['message'] });

      expect(await echo.run({ message: 'hi there' }, context(cwd))).toEqual({ status: 'ok', output: 'Echo: hi there' });
      const sum = await byName(tools, 'everything__get-sum').run({ a: 2, b: 40 }, context(cwd));
      expect(sum.status).toBe('ok');
      expect(sum.output).toContain('42');
      const image = await byName(tools, 'everything__get-tiny-image').run({}, context(cwd));
      expect(image.status).toBe('ok');
      expect(image.output).toMatch(/^Here's the image you requested:\n\[image\/png, \d+ bytes\]\nThe image above is the MCP logo\.$/);
      const bytes = Number(/\[image\/png, (\d+) bytes\]/.exec(image.output)![1]);
      expect(bytes).toBeGreaterThan(1000);
      const resource = await byName(tools, 'everything__get-resource-reference').run({ resourceType: 'Text', resourceId: 1 }, context(cwd));
      expect(resource.output).toMatch(/\n\[text\/plain, \d+ bytes: demo:\/\/resource\/dynamic\/text\/1\]\n/);
      // Invalid arguments: the server answers an error, the call does not throw.
      const bad = await echo.run({ message: 42 }, context(cwd));
      expect(bad.status).toBe('error');
      expect(set.status()[0]).toMatchObject({ state: 'ready', starts: 1 });
    } finally {
      await m.close();
    }
  });

  test('the tools filter, per-server approval and sanitized/truncated names', async () => {
    const cwd = workDir();
    const m = manager({
      every: everythingServer({ tools: ['echo', 'get-sum', 'no-such-tool'], approval: 'auto' }),
      'fix.ture': fixtureServer('normal', { approval: 'ask' }),
    });
    try {
      const set = m.toolset(cwd);
      const { tools, warnings } = await set.list();
      expect(warnings).toEqual([]);
      const every = tools.filter((t) => t.server === 'every');
      expect(every.map((t) => t.spec.name).sort()).toEqual(['every__echo', 'every__get-sum']);
      expect(every.every((t) => t.approval === 'auto' && t.needsApproval === false)).toBe(true);
      expect(set.status().find((s) => s.server === 'every')!.missing_tools).toEqual(['no-such-tool']);

      const fixture = tools.filter((t) => t.server === 'fix.ture');
      expect(fixture.every((t) => t.approval === 'ask' && t.needsApproval)).toBe(true);
      expect(fixture.every((t) => /^[A-Za-z0-9_-]{1,64}$/.test(t.spec.name))).toBe(true);
      expect(byName(fixture, 'fix_ture__odd_name_with_spaces').remoteName).toBe('odd_name_with_spaces');
      const odd = fixture.find((t) => t.remoteName === 'odd.name/with spaces')!;
      expect(odd.spec.name).toMatch(/^fix_ture__odd_name_with_spaces_[0-9a-f]{8}$/);
      expect(await odd.run({}, context(cwd))).toEqual({ status: 'ok', output: 'odd' });
      const long = fixture.find((t) => t.remoteName.startsWith('a_tool_with_a_really_long_name'))!;
      expect(long.spec.name).toHaveLength(64);
      expect(await long.run({}, context(cwd))).toEqual({ status: 'ok', output: 'long' });

      const media = await byName(fixture, 'fix_ture__media').run({}, context(cwd));
      expect(media).toEqual({
        status: 'ok',
        output: 'before\n[image/png, 1234 bytes]\n[audio/wav, 10 bytes]\n[text/plain, 6 bytes: file:///x.txt]\n[application/octet-stream, 5 bytes: file:///x.bin]\n[resource link: file:///y.txt]\nafter',
      });
      expect(await byName(fixture, 'fix_ture__fail').run({}, context(cwd))).toEqual({ status: 'error', output: 'it went wrong' });
    } finally {
      await m.close();
    }
  });

  test("a stdio server runs in the session's cwd with the base env plus its own env; one process per (server, cwd)", async () => {
    const [a, b] = [workDir(), workDir()];
    process.env.SECRET_OUTSIDE = 'leak';
    const m = manager({ fx: fixtureServer('normal', { env: { FIXTURE_VAR: 'set' } }) });
    try {
      const whoami = async (cwd: string) => {
        const set = m.toolset(cwd);
        const { tools } = await set.list();
        return JSON.parse((await byName(tools, 'fx__whoami').run({}, context(cwd))).output) as { pid: number; cwd: string; var: string; home: string; secret: null };
      };
      const inA = await whoami(a);
      expect(inA).toMatchObject({ cwd: a, var: 'set', home: process.env.HOME ?? '/tmp', secret: null });
      expect((await whoami(a)).pid).toBe(inA.pid); // shared by sessions in the same cwd
      expect((await whoami(`${a}/`)).pid).toBe(inA.pid);
      const inB = await whoami(b);
      expect(inB.cwd).toBe(b);
      expect(inB.pid).not.toBe(inA.pid);
    } finally {
      delete process.env.SECRET_OUTSIDE;
      await m.close();
    }
  });

  test('server-filesystem: read a file in a temp dir (the worked example of docs/tools.md)', async () => {
    const cwd = workDir();
    writeFileSync(join(cwd, 'notes.txt'), 'hello from the file\n');
    const m = manager({ fs: { command: process.execPath, args: [FILESYSTEM, '.'], tools: ['read_text_file', 'list_directory'] } });
    try {
      const { tools, warnings } = await m.toolset(cwd).list();
      expect(warnings).toEqual([]);
      expect(tools.map((t) => t.spec.name).sort()).toEqual(['fs__list_directory', 'fs__read_text_file']);
      const read = await byName(tools, 'fs__read_text_file').run({ path: 'notes.txt' }, context(cwd));
      expect(read).toEqual({ status: 'ok', output: 'hello from the file\n' });
      const outside = await byName(tools, 'fs__read_text_file').run({ path: '/etc/passwd' }, context(cwd));
      expect(outside.status).toBe('error');
      expect((await byName(tools, 'fs__list_directory').run({ path: '.' }, context(cwd))).output).toContain('[FILE] notes.txt');
    } finally {
      await m.close();
    }
  });
});
