/**
 * Metrics in cluster mode (docs/operations.md "Metrics"): every node answers GET /metrics
 * for itself (series labelled with its `node_id`), with the cluster series
 * `agentd_leases_owned` and `agentd_takeovers_total`. Two real nodes on a real PostgreSQL:
 * the owner is killed mid-turn, the other takes the session over, finishes the turn, and
 * its own counters say so.
 */
import { afterEach, describe, expect, test } from 'vitest';
import { havePostgres, POSTGRES_MISSING, startCluster, usePostgres, type Cluster } from './helpers/cluster.js';
import { tempDataDir } from './helpers/daemon.js';
import { scrape } from './helpers/prometheus.js';
import { cleanup } from './helpers/session.js';

const pg = usePostgres();
const clusters: Cluster[] = [];
const dirs: string[] = [];
afterEach(async () => {
  for (const cl of clusters.splice(0)) await cl.close();
  dirs.splice(0).forEach(cleanup);
});

describe.runIf(havePostgres)('per-node metrics of a cluster', () => {
  test('leases owned per node; a kill -9 of the owner mid-turn counts one takeover and the turn on the node that finished it', async () => {
    const cl = await startCluster(pg(), { nodes: ['a', 'b'], config: { approval_policy: 'auto' } });
    clusters.push(cl);
    const a = cl.node('a');
    const b = cl.node('b');
    const cwd = tempDataDir('agentd-cwd-');
    dirs.push(cwd);
    const ca = await cl.connect(a);
    const s = (await ca.createSession({ cwd })).session_id as string;
    await ca.attach(s);
    const cb = await cl.connect(b);
    await cb.attach(s);

    let ma = await scrape(a);
    let mb = await scrape(b);
    expect(ma.value('agentd_leases_owned', { node_id: 'a' })).toBe(1);
    expect(mb.value('agentd_leases_owned', { node_id: 'b' })).toBe(0);
    expect(ma.value('agentd_sessions', { node_id: 'a', status: 'idle' })).toBe(1);
    expect(mb.sum('agentd_sessions', { node_id: 'b' })).toBe(0); // b only watches it
    expect(mb.value('agentd_takeovers_total', { node_id: 'b' })).toBe(0);
    expect(ma.types.get('agentd_takeovers_total')).toBe('counter');
    // Every series carries the node's id.
    expect(ma.samples.every((x) => x.labels.node_id === 'a')).toBe(true);

    await ca.submitMessage(s, '!sleep 2000', 'long');
    await cb.waitForEvent(s, (m) => m.type === 'agent_message_delta', 10_000);
    ma = await scrape(a);
    expect(ma.value('agentd_sessions', { node_id: 'a', status: 'running' })).toBe(1);
    await a.kill9();

    await cb.waitForEvent(s, (m) => m.type === 'turn_resumed', 20_000);
    expect((await cb.waitTurnEnd(s, 'long', 30_000)).type).toBe('turn_complete');
    mb = await scrape(b);
    expect(mb.value('agentd_takeovers_total', { node_id: 'b' })).toBe(1);
    expect(mb.value('agentd_leases_owned', { node_id: 'b' })).toBe(1);
    expect(mb.value('agentd_turns_total', { node_id: 'b', route: 'scripted', outcome: 'complete' })).toBe(1);
    expect(mb.value('agentd_model_calls_total', { node_id: 'b', route: 'scripted', outcome: 'ok' })).toBe(1);
    expect(mb.value('agentd_batches_committed_total', { node_id: 'b' })).toBeGreaterThan(0);
    expect(mb.value('agentd_commit_seconds_count', { node_id: 'b' })).toBeGreaterThan(0);
  }, 90_000);
});

describe.skipIf(havePostgres)('per-node metrics of a cluster', () => {
  test.skip(`skipped: ${POSTGRES_MISSING}`, () => {});
});
