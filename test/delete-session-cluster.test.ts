/**
 * `delete_session` on the PostgreSQL journal (cluster mode, docs/sessions.md#cluster-mode):
 * two nodes; a session with a subagent child is deleted while clients on both nodes are
 * attached to it (each gets `session_deleted`); the rows and leases are gone from the
 * shared database; a restart of every node keeps the sessions gone.
 */
import pg from 'pg';
import { describe, expect, test } from 'vitest';
import type { Frame, TestClient } from './helpers/client.js';
import { havePostgres, POSTGRES_MISSING, startCluster, usePostgres } from './helpers/cluster.js';

const T = 20_000;
const pgServer = usePostgres();

describe.skipIf(havePostgres)('delete_session in cluster mode', () => {
  test.skip(`skipped: ${POSTGRES_MISSING}`, () => {});
});

async function listed(c: TestClient): Promise<string[]> {
  return ((await c.ok({ type: 'list_sessions', limit: 1000, include_children: true })).sessions as Frame[]).map((s) => s.session_id as string);
}

describe.runIf(havePostgres)('delete_session in cluster mode', () => {
  test('clients on both nodes are told; every table and the leases forget the sessions; a restart keeps them gone', async () => {
    const cluster = await startCluster(pgServer(), { nodes: 2, config: { approval_policy: 'auto' } });
    const [n1, n2] = cluster.nodes as [(typeof cluster.nodes)[0], (typeof cluster.nodes)[0]];
    const a = await cluster.connect(n1);
    const sid = (await a.createSession({ approval_policy: 'auto', title: 'cluster delete' })).session_id as string;
    await a.attach(sid);
    const m = await a.submitMessage(sid, '!delegate child task');
    await a.waitTurnEnd(sid, m, T);
    const child = a.events(sid).find((e) => e.type === 'subagent_started')!.child_session_id as string;
    const keep = (await a.createSession({ approval_policy: 'auto', title: 'keep' })).session_id as string;
    const b = await cluster.connect(n2);
    await b.attach(sid);

    const answer = await a.ok({ type: 'delete_session', session_id: sid });
    expect(answer.deleted_session_ids).toEqual([sid, child]);
    const toldA = await a.waitFor((f) => f.type === 'session_deleted' && f.req_id === undefined, T);
    expect(toldA.session_id).toBe(sid);
    // The client on the other node hears of it through the database (LISTEN).
    const toldB = await b.waitFor((f) => f.type === 'session_deleted', T);
    expect(toldB).toEqual({ type: 'session_deleted', session_id: sid, deleted_session_ids: [sid, child] });
    expect(await listed(b)).not.toContain(sid);
    expect(await b.request({ type: 'attach', session_id: child })).toMatchObject({ type: 'error', code: 'unknown_session' });

    const db = new pg.Client({ connectionString: cluster.url });
    await db.connect();
    try {
      for (const table of ['sessions', 'batches', 'transcript', 'admissions', 'session_leases']) {
        const { rows } = await db.query<{ n: string }>(`SELECT count(*) AS n FROM ${table} WHERE session_id = ANY($1::text[])`, [[sid, child]]);
        expect(Number(rows[0]!.n), table).toBe(0);
      }
    } finally {
      await db.end();
    }

    for (const n of cluster.nodes) await n.stop();
    for (const n of cluster.nodes) await n.start();
    const c = await cluster.connect(n2);
    const ids = await listed(c);
    expect(ids).not.toContain(sid);
    expect(ids).not.toContain(child);
    expect(ids).toContain(keep);
    expect(await c.request({ type: 'delete_session', session_id: sid })).toMatchObject({ type: 'error', code: 'unknown_session' });
  }, 120_000);
});
