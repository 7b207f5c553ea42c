/** The shell tool on real child processes: streaming, exit codes, timeout, output cap, secrets. */
import { describe, expect, test } from 'vitest';
import { childEnv, createShellTool } from '../src/tools/shell.js';
import { cleanup, tempDir } from './helpers/session.js';

function run(command: string, opts: { timeoutMs?: number; cap?: number; timeout_ms?: number } = {}) {
  const tool = createShellTool({ timeoutMs: opts.timeoutMs ?? 10_000, outputCapBytes: opts.cap ?? 1 << 20, secretEnv: ['MY_ROUTE_CRED'] });
  const cwd = tempDir();
  const out: Array<[string, string]> = [];
  const controller = new AbortController();
  const promise = tool
    .run({ command, ...(opts.timeout_ms && { timeout_ms: opts.timeout_ms }) }, { cwd, signal: controller.signal, onOutput: (s, c) => out.push([s, c]) })
    .finally(() => cleanup(cwd));
  return { promise, out, controller, cwd };
}

describe('shell tool', () => {
  test('streams stdout and stderr and reports the exit code', async () => {
    const { promise, out } = run('echo out; echo err >&2; exit 7');
    const result = await promise;
    expect(result).toMatchObject({ status: 'error', exit_code: 7 });
    expect(out).toContainEqual(['stdout', 'out\n']);
    expect(out).toContainEqual(['stderr', 'err\n']);
  });

  test('runs in the session cwd', async () => {
    const { promise, cwd } = run('pwd');
    expect((await promise).output.trim()).toBe(cwd);
  });

  test('a timeout kills the process group', async () => {
    const t0 = Date.now();
    const { promise } = run('sleep 20 & sleep 20; echo never', { timeout_ms: 200 });
    const result = await promise;
    expect(Date.now() - t0).toBeLessThan(3000);
    expect(result.status).toBe('error');
    expect(result.output).toMatch(/timed out after 200 ms/);
  });

  test('output beyond the cap is cut with a truncation note', async () => {
    const { promise, out } = run('head -c 100000 /dev/zero | tr "\\0" a', { cap: 1000 });
    const result = await promise;
    expect(result.output).toMatch(/^a{1000}\n\[output truncated: more than 1000 bytes\]$/);
    expect(out.map(([, c]) => c).join('').length).toBe(1000);
  });

  test("the daemon's secrets are not in the child's environment", async () => {
    process.env.AGENTD_TOKEN = 'tok';
    process.env.OPENAI_API_KEY = 'k1';
    process.env.MY_ROUTE_CRED = 'k2';
    process.env.HARMLESS_SETTING = 'visible';
    try {
      const { promise } = run('env');
      const output = (await promise).output;
      expect(output).toContain('HARMLESS_SETTING=visible');
      expect(output).not.toMatch(/AGENTD_TOKEN|OPENAI_API_KEY|MY_ROUTE_CRED/);
      expect(childEnv().PATH).toBe(process.env.PATH);
    } finally {
      delete process.env.AGENTD_TOKEN;
      delete process.env.OPENAI_API_KEY;
      delete process.env.MY_ROUTE_CRED;
      delete process.env.HARMLESS_SETTING;
    }
  });

  test('a bad command argument is an error result, not a throw', async () => {
    const tool = createShellTool({ timeoutMs: 1000, outputCapBytes: 100 });
    const result = await tool.run({ command: 42 }, { cwd: '/', signal: new AbortController().signal, onOutput: () => {} });
    expect(result).toEqual({ status: 'error', output: 'shell: "command" must be a non-empty string' });
  });
});
