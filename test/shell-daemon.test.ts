/**
 * The shell tool through the real daemon: a clean shutdown leaves no process of a running
 * command behind (also those that left its process group), and commands get the minimal
 * environment plus `tools.shell.env`, not the daemon's credentials.
 */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, expect, test } from 'vitest';
import { connect, type TestClient } from './helpers/client.js';
import { startDaemon, type Daemon } from './helpers/daemon.js';
import { alive, waitUntil } from './helpers/process.js';
import { cleanup, tempDir } from './helpers/session.js';

const daemons: Daemon[] = [];
const clients: TestClient[] = [];
const dirs: string[] = [];
afterEach(async () => {
  for (const c of clients.splice(0)) await c.close().catch(() => {});
  for (const d of daemons.splice(0)) await d.stop('SIGKILL').catch(() => {});
  dirs.splice(0).forEach(cleanup);
});

async function session(config: object, env: Record<string, string> = {}) {
  const d = await startDaemon({ config: { approval_policy: 'auto', ...config }, env });
  daemons.push(d);
  const c = await connect(d);
  clients.push(c);
  const cwd = tempDir('agentd-shell-daemon-');
  dirs.push(cwd);
  const s = (await c.createSession({ approval_policy: 'auto', cwd })).session_id as string;
  await c.attach(s);
  return { d, c, s, cwd };
}

test('SIGTERM to the daemon kills every process of a running command, setsid and double fork included', async () => {
  const { d, c, s, cwd } = await session({});
  const files = ['sh.pid', 'setsid.pid', 'double.pid', 'nohup.pid'];
  await c.submitMessage(
    s,
    "!sh trap '' TERM; echo $$ > sh.pid; " +
      "setsid sh -c 'echo $$ > setsid.pid; exec sleep 40' & " +
      "(sh -c 'echo $$ > double.pid; exec sleep 41' &); " +
      "nohup sh -c 'echo $$ > nohup.pid; exec sleep 42' > /dev/null 2>&1 & sleep 40",
  );
  await waitUntil(() => files.every((f) => existsSync(join(cwd, f)) && readFileSync(join(cwd, f), 'utf8').endsWith('\n')), 10_000, 'the command');
  const pids = files.map((f) => Number(readFileSync(join(cwd, f), 'utf8')));
  expect(pids.every(alive)).toBe(true);
  expect(await d.stop('SIGTERM')).toBe(0);
  for (const pid of pids) expect(alive(pid), `pid ${pid}`).toBe(false);
});

test("a command sees the allowlist and tools.shell.env, not the daemon's credentials", async () => {
  const { c, s } = await session(
    { tools: { shell: { env: { BUILD_MODE: 'ci' } } } },
    { GH_PAT: 'ghp_secret', DATABASE_URL: 'postgres://u:pw@h/db', LANG: 'C.UTF-8' },
  );
  const id = await c.submitMessage(s, '!sh env');
  await c.waitTurnEnd(s, id);
  const end = c.events(s).find((m) => m.type === 'tool_call_end')!;
  expect(end.output).toContain('BUILD_MODE=ci\n');
  expect(end.output).toContain('LANG=C.UTF-8\n');
  expect(end.output).not.toMatch(/GH_PAT|DATABASE_URL|AGENTD_TOKEN/);
});
