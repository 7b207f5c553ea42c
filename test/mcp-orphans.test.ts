/**
 * No MCP server outlives its owner: real pids after close(), after a server crash (its
 * leftover children), and after the owner process is killed with SIGKILL.
 */
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { afterAll, describe, expect, test } from 'vitest';
import { alive, byName, context, FIXTURE, fixtureServer, groupMembers, manager, removeWorkDirs, waitFor, workDir } from './helpers/mcp.js';
import { ROOT } from './helpers/daemon.js';

afterAll(removeWorkDirs);

interface Pids {
  pgid: number;
  pid: number;
  child: number;
}

describe('MCP server processes', () => {
  test('close() ends every server process group: the server, its children, and a server that ignores SIGTERM', async () => {
    const cwd = workDir();
    const m = manager({ plain: fixtureServer('normal'), stubborn: fixtureServer('normal', {}, ['--ignore-term', '--keep-alive']) });
    const set = m.toolset(cwd);
    const { tools } = await set.list();
    const pids: Pids[] = [];
    for (const s of set.status()) {
      const { pid } = JSON.parse((await byName(tools, `${s.server}__whoami`).run({}, context(cwd))).output) as { pid: number };
      const child = Number((await byName(tools, `${s.server}__spawn_child`).run({}, context(cwd))).output);
      pids.push({ pgid: s.pgid!, pid, child });
    }
    for (const p of pids) {
      expect(groupMembers(p.pgid)).toEqual(expect.arrayContaining([p.pgid, p.pid, p.child]));
      expect(p.pgid).not.toBe(process.pid);
    }
    const t0 = Date.now();
    await m.close();
    expect(Date.now() - t0).toBeLessThan(4000);
    for (const p of pids) {
      expect(groupMembers(p.pgid)).toEqual([]);
      expect([alive(p.pid), alive(p.child)]).toEqual([false, false]);
    }
    expect(set.status().map((s) => s.state)).toEqual(['closed', 'closed']);
    expect((await set.list()).tools).toEqual([]);
  });

  test('close() does not wait for ever on a process that left the group but holds the stdout pipe', async () => {
    const cwd = workDir();
    const m = manager({ fx: fixtureServer('normal') });
    const { tools } = await m.toolset(cwd).list();
    const escapee = Number((await byName(tools, 'fx__spawn_escapee').run({}, context(cwd))).output);
    try {
      const t0 = Date.now();
      await m.close();
      expect(Date.now() - t0).toBeLessThan(4000);
    } finally {
      process.kill(escapee, 'SIGKILL'); // it left the process group: out of reach, as documented
    }
  });

  test('a server no session uses ends after lingerMs; one used again before that is kept', async () => {
    const cwd = workDir();
    const m = manager({ fx: fixtureServer('normal') }, { lingerMs: 300 });
    try {
      const first = m.toolset(cwd);
      await first.list();
      const pgid = first.status()[0]!.pgid!;
      first.close();
      const second = m.toolset(cwd); // within the linger: the same process
      await second.list();
      expect(second.status()[0]).toMatchObject({ pgid, starts: 1 });
      second.close();
      await waitFor(() => groupMembers(pgid).length === 0, 4000, 'the unused server to end');
      const third = m.toolset(cwd);
      await third.list();
      expect(third.status()[0]!.pgid).not.toBe(pgid);
    } finally {
      await m.close();
    }
  });

  test("a server that crashes takes its children with it", async () => {
    const cwd = workDir();
    const m = manager({ fx: fixtureServer('normal') });
    try {
      const set = m.toolset(cwd);
      const { tools } = await set.list();
      const pgid = set.status()[0]!.pgid!;
      const child = Number((await byName(tools, 'fx__spawn_child').run({}, context(cwd))).output);
      expect(alive(child)).toBe(true);
      await byName(tools, 'fx__crash').run({}, context(cwd));
      await waitFor(() => !alive(child) && groupMembers(pgid).length === 0, 3000, 'the crashed server group to be gone');
    } finally {
      await m.close();
    }
  });

  test('the owner killed with SIGKILL: every server group is gone within a few seconds', async () => {
    const cwd = workDir();
    const servers = {
      plain: { command: process.execPath, args: [FIXTURE, 'normal', '--keep-alive'] },
      stubborn: { command: process.execPath, args: [FIXTURE, 'normal', '--ignore-term', '--keep-alive'] },
    };
    const owner = spawn(process.execPath, [join(ROOT, 'test', 'fixtures', 'mcp-owner.mjs'), cwd, JSON.stringify(servers)], { stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    owner.stderr!.on('data', (d: Buffer) => (err += d.toString()));
    const line = await new Promise<string>((resolve, reject) => {
      owner.stdout!.on('data', (d: Buffer) => {
        out += d.toString();
        if (out.includes('\n')) resolve(out.split('\n')[0]!);
      });
      owner.once('exit', (code) => reject(new Error(`owner exited with ${code}: ${err}`)));
    });
    const { servers: pids } = JSON.parse(line) as { servers: Pids[] };
    expect(pids).toHaveLength(2);
    for (const p of pids) expect([alive(p.pid), alive(p.child)]).toEqual([true, true]);

    owner.kill('SIGKILL');
    await waitFor(() => pids.every((p) => groupMembers(p.pgid).length === 0), 6000, 'the server groups to be gone after the owner died');
    for (const p of pids) expect([alive(p.pid), alive(p.child)]).toEqual([false, false]);
  });
});
