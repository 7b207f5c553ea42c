/**
 * The cgroup probe (contain.ts) runs a real shell once per process, not once per session
 * host: spawning forks the daemon, and every page it writes after a fork costs a
 * copy-on-write fault (docs/performance.md, item 13). Later containments reuse the verdict
 * and still contain for real.
 */
import { existsSync } from 'node:fs';
import * as childProcess from 'node:child_process';
import { join } from 'node:path';
import { afterAll, describe, expect, test, vi } from 'vitest';
import { cgroupContainment, type Containment, ownCgroupDir } from '../src/tools/contain.js';
import { createShellTool } from '../src/tools/shell.js';
import { cleanup, tempDir } from './helpers/session.js';

// The real spawnSync, counted: contain.ts's import of node:child_process gets this one.
vi.mock('node:child_process', async (importOriginal) => {
  const actual = await importOriginal<typeof import('node:child_process')>();
  return { ...actual, spawnSync: vi.fn(actual.spawnSync) };
});

const probes = (): number =>
  vi.mocked(childProcess.spawnSync).mock.calls.filter((call) => (call[1] as string[] | undefined)?.includes('agentd-probe')).length;

const made: Containment[] = [];
afterAll(() => made.forEach((c) => c.dispose()));

const cgroupsHere = process.getuid?.() === 0 && ownCgroupDir() !== null;

describe.runIf(cgroupsHere)('where the daemon may create cgroups (root with cgroup v2, as in CI)', () => {
  test('the first containment probes with one shell; the next ones spawn nothing and are cgroups of their own', () => {
    expect(probes()).toBe(0);
    const first = cgroupContainment();
    expect(first?.kind).toBe('cgroup');
    made.push(first!);
    expect(probes()).toBe(1);
    const more = [cgroupContainment(), cgroupContainment()];
    made.push(...more.map((c) => c!));
    expect(more.map((c) => c?.kind)).toEqual(['cgroup', 'cgroup']);
    expect(probes()).toBe(1);
    // Each has its own call cgroups: the same call number lands in different directories.
    const dirs = [first!, ...more].map((c) => c!.contain('true').args[3]);
    expect(new Set(dirs).size).toBe(3);
  });

  test('a containment made from the kept verdict really contains: a call runs in its cgroup, which is gone after it', async () => {
    const containment = cgroupContainment()!;
    made.push(containment);
    const before = probes();
    const toolset = createShellTool({
      timeoutMs: 10_000,
      outputCapBytes: 1 << 16,
      env: { inherit: 'minimal', set: {}, secretNames: [] },
      containment,
    });
    const cwd = tempDir('agentd-probe-');
    try {
      const result = await toolset.tool.run(
        // The call's own cgroup, as /proc sees it from inside the call.
        { command: 'cat /proc/self/cgroup' },
        { cwd, signal: new AbortController().signal, onOutput: () => {} },
      );
      expect(result.status).toBe('ok');
      const cgroup = /0::(\S+)/.exec(result.output)?.[1] ?? '';
      expect(cgroup).toMatch(new RegExp(`/agentd-${process.pid}-\\d+/call-1$`));
      // The call's cgroup is removed when the call ends.
      expect(existsSync(join(ownCgroupDir()!, cgroup.slice(cgroup.indexOf(`/agentd-${process.pid}-`))))).toBe(false);
    } finally {
      await toolset.close();
      cleanup(cwd);
    }
    expect(probes()).toBe(before);
  });
});

test.runIf(!cgroupsHere)('where cgroups cannot be made, every host falls back without a second probe', () => {
  expect(cgroupContainment()).toBeNull();
  expect(cgroupContainment()).toBeNull();
  expect(probes()).toBeLessThanOrEqual(1);
});
