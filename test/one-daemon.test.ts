/**
 * One daemon per data dir, one process per node id (docs/operations.md, docs/cluster.md):
 * two `agentd serve` started at the same instant on one data dir — exactly one runs, the
 * other exits 1 naming its pid; a second process with a live node's `--node-id` is
 * refused naming the node and its URL; after a kill -9 the node id starts again.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { rmSync } from 'node:fs';
import { afterEach, describe, expect, it } from 'vitest';
import { havePostgres, startCluster, usePostgres } from './helpers/cluster.js';
import { BIN, ROOT, runAgentd, tempDataDir } from './helpers/daemon.js';

interface Proc {
  child: ChildProcess;
  out: string;
  err: string;
  exited: Promise<number | null>;
  listening: Promise<boolean>;
}

const procs: ChildProcess[] = [];
afterEach(() => {
  for (const p of procs.splice(0)) if (p.exitCode === null) p.kill('SIGKILL');
});

function serve(dataDir: string): Proc {
  const child = spawn(process.execPath, [BIN, 'serve', '--port', '0', '--no-auth', '--data-dir', dataDir], {
    cwd: ROOT,
    env: { ...process.env, AGENTD_LOG_LEVEL: 'warn' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  procs.push(child);
  const p: Proc = { child, out: '', err: '', exited: null as never, listening: null as never };
  p.exited = new Promise((resolve) => child.on('exit', (code) => resolve(code)));
  p.listening = new Promise((resolve) => {
    child.stdout!.on('data', (d: Buffer) => {
      p.out += d.toString();
      if (p.out.includes('agentd listening on')) resolve(true);
    });
    child.on('exit', () => resolve(false));
  });
  child.stderr!.on('data', (d: Buffer) => (p.err += d.toString()));
  return p;
}

describe('one daemon per data dir', () => {
  it('of two daemons started at the same instant exactly one runs; the other exits 1 naming its pid', async () => {
    const dataDir = tempDataDir();
    try {
      for (let round = 0; round < 2; round++) {
        const pair = [serve(dataDir), serve(dataDir)];
        const running = await Promise.all(pair.map((p) => Promise.race([p.listening, p.exited.then(() => false)])));
        expect(running.filter(Boolean), pair.map((p) => p.err).join('\n')).toHaveLength(1);
        const winner = pair[running.indexOf(true)]!;
        const loser = pair[running.indexOf(false)]!;
        expect(await loser.exited).toBe(1);
        expect(loser.err).toContain(`pid ${winner.child.pid}`);
        expect(winner.child.exitCode).toBeNull();
        winner.child.kill('SIGKILL'); // the lock goes with the process, however it ends
        await winner.exited;
      }
    } finally {
      rmSync(dataDir, { recursive: true, force: true });
    }
  }, 60_000);
});

const pg = usePostgres();

describe.runIf(havePostgres)('one process per node id', () => {
  it('refuses a live node id naming the node and its URL; starts again after the holder died', async () => {
    const cluster = await startCluster(pg(), { nodes: ['a'], cluster: { lease_ms: 1500, heartbeat_ms: 500 } });
    const a = cluster.node('a');
    const other = tempDataDir();
    try {
      const second = await runAgentd(['serve', '--port', '0', '--data-dir', other, '--postgres', cluster.nodeUrl('a'), '--node-id', 'a'], {
        AGENTD_CLUSTER_SECRET: cluster.secret,
        AGENTD_POSTGRES_URL: undefined,
      });
      expect(second.code, second.stderr).toBe(1);
      expect(second.stderr).toContain('node a');
      expect(second.stderr).toContain(a.url);
      expect((await a.healthz()).ok).toBe(true); // the holder kept running, untouched
      await a.kill9();
      await a.start(); // waits for the dead holder's heartbeat to lapse, then runs
      expect((await a.healthz()).node_id).toBe('a');
    } finally {
      rmSync(other, { recursive: true, force: true });
    }
  }, 90_000);
});
