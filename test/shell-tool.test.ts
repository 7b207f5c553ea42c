/** The shell tool on real child processes: streaming, exit codes, timeout, output cap, minimal environment. */
import { describe, expect, test } from 'vitest';
import { parseConfig } from '../src/config/config.js';
import { type EnvPolicy, shellEnvPolicy, toolEnv } from '../src/tools/env.js';
import { createShellTool } from '../src/tools/shell.js';
import { cleanup, tempDir } from './helpers/session.js';

const minimal: EnvPolicy = { inherit: 'minimal', set: {}, secretNames: ['MY_ROUTE_CRED'] };

function run(command: string, opts: { timeoutMs?: number; cap?: number; timeout_ms?: number; env?: EnvPolicy } = {}) {
  const { tool } = createShellTool({ timeoutMs: opts.timeoutMs ?? 10_000, outputCapBytes: opts.cap ?? 1 << 20, env: opts.env ?? minimal });
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
      // HARMLESS_SETTING is not on the allowlist: it passes when named (or under "all").
      const { promise } = run('env', { env: { ...minimal, inherit: ['HARMLESS_SETTING'] } });
      const output = (await promise).output;
      expect(output).toContain('HARMLESS_SETTING=visible');
      expect(output).not.toMatch(/AGENTD_TOKEN|OPENAI_API_KEY|MY_ROUTE_CRED/);
      expect(toolEnv(minimal).PATH).toBe(process.env.PATH);
    } finally {
      delete process.env.AGENTD_TOKEN;
      delete process.env.OPENAI_API_KEY;
      delete process.env.MY_ROUTE_CRED;
      delete process.env.HARMLESS_SETTING;
    }
  });

  test('the environment is an allowlist: credentials with innocent names do not pass', async () => {
    const leaks = {
      DATABASE_URL: 'postgres://app:hunter2@db/app',
      GH_PAT: 'ghp_x',
      NPM_AUTH: 'npm_x',
      AWS_ACCESS_KEY_ID: 'AKIAX',
      SSH_AUTH_SOCK: '/tmp/ssh-agent.sock',
      GOOGLE_APPLICATION_CREDENTIALS: '/secrets/gcp.json',
    };
    const kept = { LANG: 'C.UTF-8', LC_ALL: 'C.UTF-8', TERM: 'xterm-256color', TMPDIR: '/tmp', SHELL: '/bin/sh', USER: 'me' };
    Object.assign(process.env, leaks, kept);
    try {
      const env = (await run('env').promise).output;
      for (const name of Object.keys(leaks)) expect(env).not.toContain(`${name}=`);
      for (const [name, value] of Object.entries(kept)) expect(env).toContain(`${name}=${value}\n`);
      expect(env).toContain(`PATH=${process.env.PATH}\n`);
      expect(env).toContain(`HOME=${process.env.HOME}\n`);
    } finally {
      for (const name of Object.keys(leaks)) delete process.env[name];
    }
  });

  test('tools.shell.env is added; inherit_env "all" passes the rest, never the daemon\'s credentials', async () => {
    process.env.GH_PAT = 'ghp_x';
    process.env.AGENTD_TOKEN = 'tok';
    process.env.OLLAMA_KEY = 'k';
    try {
      const config = (inherit_env: unknown) =>
        parseConfig({
          models: { routes: { local: { provider: 'openai', model: 'm', api_key_env: 'OLLAMA_KEY' } } },
          tools: { shell: { env: { FOO: 'bar', PATH: '/opt/bin:/usr/bin:/bin' }, inherit_env } },
        });
      const minimalEnv = (await run('env', { env: shellEnvPolicy(config('minimal')) }).promise).output;
      expect(minimalEnv).toContain('FOO=bar\n');
      expect(minimalEnv).toContain('PATH=/opt/bin:/usr/bin:/bin\n');
      expect(minimalEnv).not.toContain('GH_PAT=');
      const all = (await run('env', { env: shellEnvPolicy(config('all')) }).promise).output;
      expect(all).toContain('GH_PAT=ghp_x\n');
      expect(all).toContain('FOO=bar\n');
      expect(all).not.toMatch(/AGENTD_TOKEN|OLLAMA_KEY/);
      expect(() => config('everything')).toThrow(/tools\.shell\.inherit_env/);
    } finally {
      delete process.env.GH_PAT;
      delete process.env.AGENTD_TOKEN;
      delete process.env.OLLAMA_KEY;
    }
  });

  test('a bad command argument is an error result, not a throw', async () => {
    const { tool } = createShellTool({ timeoutMs: 1000, outputCapBytes: 100, env: minimal });
    const result = await tool.run({ command: 42 }, { cwd: '/', signal: new AbortController().signal, onOutput: () => {} });
    expect(result).toEqual({ status: 'error', output: 'shell: "command" must be a non-empty string' });
  });
});
