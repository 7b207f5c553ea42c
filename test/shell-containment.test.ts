/**
 * No shell command outlives its call: real processes that leave the process group
 * (setsid, double fork, nohup, a background job holding stdout) are killed on timeout,
 * interrupt, shutdown and when the call ends — under every containment available here.
 */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, test } from 'vitest';
import { spawn, spawnSync } from 'node:child_process';
import { mkdirSync } from 'node:fs';
import { cgroupContainment, type Containment, ownCgroupDir, processTreeContainment, reapStale } from '../src/tools/contain.js';
import { createShellTool, type ShellToolset } from '../src/tools/shell.js';
import { alive, waitUntil as waitFor } from './helpers/process.js';
import { cleanup, tempDir } from './helpers/session.js';

/** Pids written by the command into `names` (files in cwd), once all are there. */
async function pids(cwd: string, names: string[]): Promise<number[]> {
  await waitFor(() => names.every((n) => existsSync(join(cwd, n)) && readFileSync(join(cwd, n), 'utf8').endsWith('\n')));
  return names.map((n) => Number(readFileSync(join(cwd, n), 'utf8')));
}

// Each escape writes its pid; `exec sleep` keeps the pid the long-running process's.
const ESCAPES = [
  `setsid sh -c 'echo $$ > setsid.pid; exec sleep 30' &`,
  `(sh -c 'echo $$ > double.pid; exec sleep 31' &)`,
  `nohup sh -c 'echo $$ > nohup.pid; exec sleep 32' > /dev/null 2>&1 &`,
  `setsid sh -c '(setsid sh -c "echo \\$\\$ > deep.pid; exec sleep 33" &)' &`,
].join('\n');
const ESCAPE_PIDS = ['setsid.pid', 'double.pid', 'nohup.pid', 'deep.pid'];

const kinds: Array<[string, () => Containment | null]> = [
  ['cgroup', cgroupContainment],
  ['process-tree', processTreeContainment],
];

const dirs: string[] = [];
afterAll(() => dirs.forEach(cleanup));
const made: Containment[] = [];
afterAll(() => made.forEach((c) => c.dispose()));

for (const [kind, make] of kinds) {
  const containment = make();
  if (containment) made.push(containment);
  describe.skipIf(!containment)(`containment: ${kind}`, () => {
    function shell(graceMs = 300): { toolset: ShellToolset; cwd: string; run: (command: string, extra?: { timeout_ms?: number; signal?: AbortSignal }) => Promise<import('../src/tools/types.js').ToolResult> } {
      const toolset = createShellTool({
        timeoutMs: 20_000,
        outputCapBytes: 1 << 20,
        env: { inherit: 'minimal', set: {}, secretNames: [] },
        containment: containment!,
        killGraceMs: graceMs,
      });
      const cwd = tempDir('agentd-contain-');
      dirs.push(cwd);
      return {
        toolset,
        cwd,
        run: (command, extra = {}) =>
          toolset.tool.run(
            { command, ...(extra.timeout_ms && { timeout_ms: extra.timeout_ms }) },
            { cwd, signal: extra.signal ?? new AbortController().signal, onOutput: () => {} },
          ),
      };
    }

    test('a background job holding stdout ends with the shell, long before the timeout', async () => {
      const { run, cwd } = shell();
      const t0 = Date.now();
      const result = await run('sleep 12 & echo $! > bg.pid; echo bg', { timeout_ms: 2000 });
      expect(Date.now() - t0).toBeLessThan(1500);
      expect(result).toEqual({ status: 'ok', output: 'bg\n', exit_code: 0 });
      const [bg] = await pids(cwd, ['bg.pid']);
      expect(alive(bg!)).toBe(false);
    });

    test('a timeout ends a call whose shell ignores TERM; its background job holding stdout dies too', async () => {
      const { run, cwd } = shell();
      const t0 = Date.now();
      const result = await run('trap "" TERM; sleep 12 & echo $! > bg.pid; echo bg; wait; wait', { timeout_ms: 500 });
      expect(Date.now() - t0).toBeLessThan(3000);
      expect(result.status).toBe('error');
      expect(result.output).toMatch(/^bg\n\n\[timed out after 500 ms/);
      const [bg] = await pids(cwd, ['bg.pid']);
      expect(alive(bg!)).toBe(false);
    });

    test('interrupt kills every descendant, also those that left the process group', async () => {
      const { run, cwd } = shell();
      const controller = new AbortController();
      const call = run(`${ESCAPES}\nsleep 30`, { signal: controller.signal });
      const all = await pids(cwd, ESCAPE_PIDS);
      expect(all.every(alive)).toBe(true);
      controller.abort();
      await call;
      for (const pid of all) expect(alive(pid), `pid ${pid}`).toBe(false);
    });

    test('a timeout kills every descendant, also those that left the process group', async () => {
      const { run, cwd } = shell();
      const result = await run(`${ESCAPES}\nsleep 30`, { timeout_ms: 1500 });
      expect(result.output).toMatch(/timed out after 1500 ms/);
      for (const pid of await pids(cwd, ESCAPE_PIDS)) expect(alive(pid), `pid ${pid}`).toBe(false);
    });

    test('when the shell exits, what it left running is killed', async () => {
      const { run, cwd } = shell();
      const t0 = Date.now();
      const result = await run(`${ESCAPES}\nwhile [ ! -s deep.pid ]; do sleep 0.05; done; echo done`);
      expect(result).toMatchObject({ status: 'ok', exit_code: 0, output: 'done\n' });
      expect(Date.now() - t0).toBeLessThan(5000);
      for (const pid of await pids(cwd, ESCAPE_PIDS)) expect(alive(pid), `pid ${pid}`).toBe(false);
    });

    test.runIf(kind === 'cgroup')('a process that left the session, lost its parent and cleared its environment dies too', async () => {
      const { run, cwd } = shell();
      const controller = new AbortController();
      const escape = `setsid env -i /bin/sh -c '(setsid env -i /bin/sh -c "echo \\$\\$ > envi.pid; exec sleep 34" > /dev/null 2>&1 &)' &`;
      const call = run(`${escape}\nsleep 30`, { signal: controller.signal });
      const [pid] = await pids(cwd, ['envi.pid']);
      expect(alive(pid!)).toBe(true);
      controller.abort();
      await call;
      expect(alive(pid!)).toBe(false);
    });

    test('close() ends running calls (TERM, then KILL) and refuses new ones', async () => {
      const { run, cwd, toolset } = shell(500);
      const call = run(`trap "" TERM; echo $$ > sh.pid; ${ESCAPES}\nsleep 30; sleep 30`);
      const all = await pids(cwd, ['sh.pid', ...ESCAPE_PIDS]);
      const t0 = Date.now();
      await toolset.close();
      expect(Date.now() - t0).toBeLessThan(4000);
      expect((await call).output).toMatch(/the daemon is shutting down/);
      for (const pid of all) expect(alive(pid), `pid ${pid}`).toBe(false);
      expect(await run('echo late')).toEqual({ status: 'error', output: 'shell: not run: the daemon is shutting down' });
    });
  });
}

test('cgroup containment is used where the daemon may create cgroups (root with cgroup v2, as in CI)', () => {
  if (process.getuid?.() === 0 && ownCgroupDir() !== null) expect(made.map((c) => c.kind)).toContain('cgroup');
});

test.runIf(made.some((c) => c.kind === 'cgroup'))("a start kills the shell processes a daemon killed with kill -9 left in its cgroups", async () => {
  // A pid that is gone: a process that ran and exited.
  const dead = spawnSync('/bin/true').pid;
  const parent = join(ownCgroupDir()!, `agentd-${dead}-1`);
  mkdirSync(join(parent, 'call-1'), { recursive: true });
  const orphan = spawn('/bin/sh', ['-c', 'echo 0 > "$1/cgroup.procs" && exec sleep 30', 'orphan', join(parent, 'call-1')], {
    stdio: 'ignore',
    detached: true,
  });
  await waitFor(() => readFileSync(join(parent, 'call-1', 'cgroup.procs'), 'utf8').trim() === String(orphan.pid));
  cgroupContainment()?.dispose();
  await waitFor(() => !alive(orphan.pid!));
  // Removed then, or (if it was still emptying) by the start after.
  if (existsSync(parent)) cgroupContainment()?.dispose();
  expect(existsSync(parent)).toBe(false);
});

describe('reaping a dead daemon\'s call cgroups at start-up', () => {
  test('an entry that vanished or cannot be read is skipped, never fatal (concurrent daemons race on it)', () => {
    const base = tempDir('agentd-reap-');
    // A dead pid's "cgroup" that is a plain file: reading it as a directory fails (ENOTDIR),
    // as it does (ENOENT) when another daemon removed it between the listing and the read.
    const { writeFileSync } = require('node:fs') as typeof import('node:fs');
    writeFileSync(join(base, 'agentd-999999999-1'), '');
    mkdirSync(join(base, 'agentd-999999998-1', 'call-1'), { recursive: true });
    expect(() => reapStale(base)).not.toThrow();
    // The readable stale call group was still killed (on cgroupfs, cgroup.kill exists; here it is written).
    expect(readFileSync(join(base, 'agentd-999999998-1', 'call-1', 'cgroup.kill'), 'utf8')).toBe('1');
    cleanup(base);
  });
});
