/**
 * Cluster mode's statements on the shared database (docs/cluster.md): nodes and their
 * heartbeats, one lease per session with an epoch (the fencing token every commit
 * checks, see store.ts), takeover of expired leases, the token kept for the whole
 * cluster. Every time is the database's clock (`now()`), so nodes with skewed clocks
 * agree on expiry; a lease row is never deleted — handing it back expires it, taking it
 * bumps the epoch — so epochs only grow and an old owner stays fenced.
 */
import { randomBytes } from 'node:crypto';
import type pg from 'pg';
import { readFailure } from './errors.js';

/** A session's lease as this node holds it. */
export interface Lease {
  sessionId: string;
  epoch: number;
}

/** Who owns a session now. */
export interface LeaseOwner {
  nodeId: string;
  advertiseUrl: string;
  epoch: number;
  /** The lease has not expired (its node heartbeats). */
  live: boolean;
}

/** One row of `agentd cluster status`. */
export interface NodeStatus {
  node_id: string;
  advertise_url: string;
  heartbeat_age_ms: number;
  alive: boolean;
  stopped: boolean;
  sessions_owned: number;
}

/** The channel told when leases were handed back (payload: the node id): live nodes take over at once. */
export const LEASE_CHANNEL = 'agentd_leases';

const SQL = {
  register: `INSERT INTO nodes (node_id, advertise_url, started_at, heartbeat_at, stopped_at) VALUES ($1, $2, now(), now(), NULL)
    ON CONFLICT (node_id) DO UPDATE SET advertise_url = EXCLUDED.advertise_url, started_at = now(), heartbeat_at = now(), stopped_at = NULL`,
  // A node that starts (again) holds nothing: its old leases expire, their epochs stay fenced.
  dropAll: `UPDATE session_leases SET expires_at = now() - interval '1 millisecond' WHERE node_id = $1 AND expires_at > now()`,
  beat: 'UPDATE nodes SET heartbeat_at = now() WHERE node_id = $1',
  // Only the leases the node still acts on: one it forgot (it could not hand it back) expires.
  renew: `UPDATE session_leases SET expires_at = now() + $2 * interval '1 millisecond'
    WHERE node_id = $1 AND session_id = ANY($3::text[]) AND expires_at > now() RETURNING session_id, epoch`,
  // Insert a first lease, or take an expired one (or this node's own, e.g. after a fault): the epoch goes up.
  claim: `INSERT INTO session_leases (session_id, node_id, epoch, expires_at) VALUES ($1, $2, 1, now() + $3 * interval '1 millisecond')
    ON CONFLICT (session_id) DO UPDATE SET node_id = EXCLUDED.node_id, epoch = session_leases.epoch + 1, expires_at = EXCLUDED.expires_at
    WHERE session_leases.expires_at <= now() OR session_leases.node_id = EXCLUDED.node_id
    RETURNING epoch`,
  release: `UPDATE session_leases SET expires_at = now() - interval '1 millisecond'
    WHERE session_id = ANY($2::text[]) AND node_id = $1 AND expires_at > now()`,
  stop: 'UPDATE nodes SET stopped_at = now() WHERE node_id = $1',
  owner: `SELECT l.node_id, n.advertise_url, l.epoch, l.expires_at > now() AS live
    FROM session_leases l JOIN nodes n USING (node_id) WHERE l.session_id = $1`,
  // Sessions with unfinished work that nobody holds: what a live node takes over.
  orphans: `SELECT s.session_id FROM sessions s LEFT JOIN session_leases l USING (session_id)
    WHERE s.unfinished AND (l.session_id IS NULL OR l.expires_at <= now()) ORDER BY s.ordinal LIMIT $1`,
  liveNodes: `SELECT node_id FROM nodes WHERE stopped_at IS NULL AND heartbeat_at > now() - $1 * interval '1 millisecond' ORDER BY node_id`,
  status: `SELECT n.node_id, n.advertise_url, n.stopped_at IS NOT NULL AS stopped,
      (EXTRACT(EPOCH FROM (now() - n.heartbeat_at)) * 1000)::bigint AS heartbeat_age_ms,
      (SELECT count(*) FROM session_leases l WHERE l.node_id = n.node_id AND l.expires_at > now()) AS sessions_owned
    FROM nodes n ORDER BY n.node_id`,
  token: `WITH ins AS (INSERT INTO cluster_settings (key, value) VALUES ('client_token', $1) ON CONFLICT (key) DO NOTHING RETURNING value)
    SELECT value FROM ins UNION ALL SELECT value FROM cluster_settings WHERE key = 'client_token' LIMIT 1`,
} as const;

async function run<R extends pg.QueryResultRow>(pool: pg.Pool, name: keyof typeof SQL, values: unknown[]): Promise<pg.QueryResult<R>> {
  try {
    return await pool.query<R>({ name: `agentd_lease_${name}`, text: SQL[name], values });
  } catch (err) {
    throw readFailure(`cluster ${name}`, err);
  }
}

/** Register (or re-register) this node; it starts with no leases. */
export async function registerNode(pool: pg.Pool, nodeId: string, advertiseUrl: string): Promise<void> {
  await run(pool, 'register', [nodeId, advertiseUrl]);
  await run(pool, 'dropAll', [nodeId]);
}

/** One heartbeat: the node row, then the leases it acts on (`sessionIds`) renewed. Answers those still held. */
export async function heartbeat(pool: pg.Pool, nodeId: string, leaseMs: number, sessionIds: string[]): Promise<Lease[]> {
  await run(pool, 'beat', [nodeId]);
  if (sessionIds.length === 0) return [];
  const { rows } = await run<{ session_id: string; epoch: string }>(pool, 'renew', [nodeId, leaseMs, sessionIds]);
  return rows.map((r) => ({ sessionId: r.session_id, epoch: Number(r.epoch) }));
}

/** Take the session's lease if nobody live holds it; the new epoch, or null (a live node owns it). */
export async function claimLease(pool: pg.Pool, sessionId: string, nodeId: string, leaseMs: number): Promise<number | null> {
  const { rows } = await run<{ epoch: string }>(pool, 'claim', [sessionId, nodeId, leaseMs]);
  return rows[0] ? Number(rows[0].epoch) : null;
}

/** Hand leases back (they expire now); with `stopping`, mark the node stopped and tell the others. */
export async function releaseLeases(pool: pg.Pool, nodeId: string, sessionIds: string[], stopping = false): Promise<void> {
  if (sessionIds.length > 0) await run(pool, 'release', [nodeId, sessionIds]);
  if (stopping) {
    await run(pool, 'dropAll', [nodeId]);
    await run(pool, 'stop', [nodeId]);
  }
  await pool.query('SELECT pg_notify($1, $2)', [LEASE_CHANNEL, nodeId]).catch(() => undefined);
}

export async function leaseOwner(pool: pg.Pool, sessionId: string): Promise<LeaseOwner | null> {
  const { rows } = await run<{ node_id: string; advertise_url: string; epoch: string; live: boolean }>(pool, 'owner', [sessionId]);
  const r = rows[0];
  return r ? { nodeId: r.node_id, advertiseUrl: r.advertise_url, epoch: Number(r.epoch), live: r.live } : null;
}

/** Unfinished sessions nobody holds, oldest first, and the live nodes (sorted) to spread them over. */
export async function orphans(pool: pg.Pool, leaseMs: number, limit = 200): Promise<{ sessions: string[]; liveNodes: string[] }> {
  const [s, n] = await Promise.all([
    run<{ session_id: string }>(pool, 'orphans', [limit]),
    run<{ node_id: string }>(pool, 'liveNodes', [leaseMs]),
  ]);
  return { sessions: s.rows.map((r) => r.session_id), liveNodes: n.rows.map((r) => r.node_id) };
}

export async function clusterStatus(pool: pg.Pool, leaseMs: number): Promise<NodeStatus[]> {
  const { rows } = await run<{ node_id: string; advertise_url: string; stopped: boolean; heartbeat_age_ms: string; sessions_owned: string }>(
    pool,
    'status',
    [],
  );
  return rows.map((r) => {
    const age = Number(r.heartbeat_age_ms);
    return {
      node_id: r.node_id,
      advertise_url: r.advertise_url,
      heartbeat_age_ms: age,
      alive: !r.stopped && age < leaseMs,
      stopped: r.stopped,
      sessions_owned: Number(r.sessions_owned),
    };
  });
}

/** The cluster's client token: `candidate` if given and none is kept yet, else the kept one (generated once). */
export async function clusterToken(pool: pg.Pool, candidate?: string): Promise<string> {
  const fresh = candidate ?? randomBytes(24).toString('base64url');
  const { rows } = await run<{ value: string }>(pool, 'token', [fresh]);
  return rows[0]?.value ?? fresh;
}

/** `agentd cluster status` from outside any node: one short-lived connection. */
export async function readClusterStatus(url: string, leaseMs: number, connectTimeoutMs = 5000): Promise<NodeStatus[]> {
  const { createPool } = await import('./pool.js');
  const pool = createPool({ url, max: 1, connectTimeoutMs, applicationName: 'agentd:status' });
  try {
    return await clusterStatus(pool, leaseMs);
  } finally {
    await pool.end().catch(() => undefined);
  }
}
