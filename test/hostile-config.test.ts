/**
 * Hostile operators and models (docs/configuration.md, docs/tools.md, docs/cluster.md),
 * through real `agentd serve` processes: durations above 2^31−1 ms, a system prompt file
 * that is a device, a FIFO or too large, a data dir under /proc and a short cluster secret
 * are refused fast with exit 2 and a message naming the problem; tool names `__proto__`
 * and `constructor` are plain names under `auto`; the cluster secret is no client token.
 */
import { execFileSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { connect } from './helpers/client.js';
import { havePostgres, startCluster, usePostgres } from './helpers/cluster.js';
import { runAgentd, startDaemon, tempDataDir } from './helpers/daemon.js';
import { cleanup } from './helpers/session.js';

const dirs: string[] = [];
afterAll(() => dirs.forEach((d) => cleanup(d)));

/** `agentd serve` on a fresh data dir with `config`; it must exit on its own. */
async function serveWith(config: unknown, args: string[] = [], env: Record<string, string | undefined> = {}) {
  const dataDir = tempDataDir();
  dirs.push(dataDir);
  if (config !== undefined) writeFileSync(join(dataDir, 'config.json'), JSON.stringify(config));
  return { dataDir, ...(await runAgentd(['serve', '--port', '0', '--no-auth', '--data-dir', dataDir, ...args], env, 15_000)) };
}

describe('refused at start-up with exit 2', () => {
  it('a duration above 2^31-1 ms', async () => {
    const r = await serveWith({ limits: { shell_timeout_ms: 3_000_000_000 } });
    expect(r.code, r.stderr).toBe(2);
    expect(r.stderr).toContain('shell_timeout_ms');
    expect(r.stderr).toContain('2147483647');
  });

  it('a system prompt file that is a device, a FIFO or larger than 64 KiB', async () => {
    const dev = await serveWith({ system_prompt: { file: '/dev/zero' } });
    expect(dev.code, dev.stderr).toBe(2);
    expect(dev.stderr).toContain('not a regular file');
    const dir = tempDataDir();
    dirs.push(dir);
    execFileSync('mkfifo', [join(dir, 'fifo')]);
    const fifo = await serveWith({ system_prompt: { file: join(dir, 'fifo') } });
    expect(fifo.code, fifo.stderr).toBe(2);
    expect(fifo.stderr).toContain('not a regular file');
    writeFileSync(join(dir, 'big.md'), 'x'.repeat(64 * 1024 + 1));
    const big = await serveWith({ system_prompt: { file: join(dir, 'big.md') } });
    expect(big.code, big.stderr).toBe(2);
    expect(big.stderr).toContain('65537 bytes');
  });

  it('a data dir under /proc', async () => {
    const r = await runAgentd(['serve', '--port', '0', '--no-auth', '--data-dir', '/proc/self/x'], {}, 15_000);
    expect(r.code, r.stderr).toBe(2);
    expect(r.stderr).toContain('not a usable data dir');
  });

  it('a cluster secret shorter than 32 bytes', async () => {
    const r = await serveWith(undefined, ['--postgres', 'postgres://127.0.0.1:1/none', '--node-id', 'a'], { AGENTD_CLUSTER_SECRET: 'x', AGENTD_POSTGRES_URL: undefined });
    expect(r.code, r.stderr).toBe(2);
    expect(r.stderr).toContain('at least 32 bytes');
  });
});

it('tool names __proto__ and constructor are plain names: an unknown tool under auto, never an approval', async () => {
  const d = await startDaemon({ config: { approval_policy: 'auto' } });
  const c = await connect(d);
  try {
    const s = (await c.createSession({ approval_policy: 'auto' })).session_id as string;
    await c.attach(s);
    for (const name of ['__proto__', 'constructor', 'toString']) {
      const id = await c.submitMessage(s, `!tool ${name} {}`);
      await c.waitTurnEnd(s, id, 30_000);
      const ends = c.events(s).filter((m) => m.type === 'tool_call_end');
      expect(ends[ends.length - 1]!.status, name).toBe('error');
    }
    expect(c.events(s).some((m) => m.type === 'exec_approval_request')).toBe(false);
  } finally {
    await c.close();
    await d.stop();
  }
}, 60_000);

const pg = usePostgres();

describe.runIf(havePostgres)('the cluster secret', () => {
  it('is never accepted as a client token', async () => {
    const cluster = await startCluster(pg(), { nodes: ['a'] });
    const a = cluster.node('a');
    await expect(connect({ wsUrl: a.wsUrl, token: cluster.secret })).rejects.toThrow(/unauthorized|token/);
    // Even claiming to be a node link, it may only forward messages.
    const link = await connect({ wsUrl: a.wsUrl, token: cluster.secret }, { helloFields: { client: 'agentd-node/x' } });
    const answer = await link.request({ type: 'list_sessions', req_id: 'r1' });
    expect(answer.type).toBe('error');
    expect(answer.code).toBe('unauthorized');
    await link.close();
    const client = await connect({ wsUrl: a.wsUrl, token: cluster.token });
    expect((await client.request({ type: 'list_sessions', req_id: 'r2' })).type).not.toBe('error');
    await client.close();
  }, 90_000);
});
