/**
 * Clients in cluster mode (docs/cluster.md "Clients and failover"), three real daemons on
 * one real PostgreSQL: `list_nodes` names the live nodes; `agentd watch` given only one
 * node's URL learns the others, and when that node is killed (-9) mid-turn it follows the
 * session to a live node and resumes exactly — every batch once, in order, to the end of
 * the turn that another node took over.
 */
import { spawn } from 'node:child_process';
import { describe, expect, test } from 'vitest';
import { havePostgres, POSTGRES_MISSING, startCluster, usePostgres } from './helpers/cluster.js';
import { BIN, ROOT, tempDataDir } from './helpers/daemon.js';
import { cleanup } from './helpers/session.js';
import { waitFor } from './helpers/tui.js';

const pg = usePostgres();

describe.runIf(havePostgres)('clients of a cluster', () => {
  test('list_nodes, and agentd watch following a kill -9 of its node to a live one', async () => {
    const cl = await startCluster(pg(), { config: { approval_policy: 'auto' } });
    const a = cl.node('a');
    const c = await cl.connect(a);
    const nodes = await c.request({ type: 'list_nodes' });
    expect(nodes.type).toBe('nodes');
    expect(nodes.cluster).toBe(true);
    expect((nodes.nodes as Array<{ node_id: string; self: boolean }>).map((n) => [n.node_id, n.self]).sort()).toEqual([
      ['a', true],
      ['b', false],
      ['c', false],
    ]);

    const cwd = tempDataDir('agentd-cwd-');
    try {
      const aUrl = a.url;
      const sid = (await c.createSession({ cwd })).session_id as string;
      // The watcher is given node a only.
      const watch = spawn(process.execPath, [BIN, 'watch', sid, '--json', '--url', aUrl, '--token', cl.token], { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] });
      let out = '';
      let err = '';
      watch.stdout.on('data', (d: Buffer) => (out += d.toString()));
      watch.stderr.on('data', (d: Buffer) => (err += d.toString()));
      const exited = new Promise<number | null>((resolve) => watch.on('exit', (code) => setImmediate(() => resolve(code))));
      await waitFor(() => err.includes('watching'), 'the watcher to attach', 20_000);
      await new Promise((r) => setTimeout(r, 300)); // its list_nodes answered

      await c.attach(sid, { replay_batches: 0 });
      await c.submitMessage(sid, '!sleep 4000');
      await c.waitForEvent(sid, (m) => m.type === 'agent_message_delta', 15_000);
      await a.kill9();
      await waitFor(() => out.includes('"turn_complete"'), `the watcher to see the turn end on another node\n${err}`, 40_000);
      expect(err).toMatch(/connected to ws:\/\/127\.0\.0\.1:\d+\/v1; resuming/);
      expect(err.split('\n').filter((l) => l.includes('resuming')).join('\n')).not.toContain(aUrl);

      const lines = out.trimEnd().split('\n').map((l) => JSON.parse(l) as { sequence: number; msg: { type: string } });
      const seqs = [...new Set(lines.map((l) => l.sequence))];
      // Every batch once and in order: sequences of consecutive batches with no gap.
      expect(seqs).toEqual(Array.from({ length: seqs.length }, (_, i) => seqs[0]! + i));
      expect(lines.filter((l) => l.msg.type === 'turn_complete')).toHaveLength(1);
      expect(lines.some((l) => l.msg.type === 'turn_resumed')).toBe(true);
      watch.kill('SIGINT');
      expect(await exited).toBe(0);
    } finally {
      cleanup(cwd);
    }
  });
});

describe.skipIf(havePostgres)('clients of a cluster', () => test.skip(`skipped: ${POSTGRES_MISSING}`, () => {}));
