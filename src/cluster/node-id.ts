/**
 * One process per node id (docs/cluster.md): before a node joins, a node id whose
 * heartbeat is newer than `lease_ms` belongs to a live process unless proven otherwise.
 * Its advertised URL is asked (`/healthz`): an answer refuses the start; silence (the
 * holder died) means waiting until the heartbeat lapses, then starting as a restart
 * under the same node id.
 */
import type { NodeStatus } from '../journal/pg/leases.js';

export interface NodeIdCheck {
  status(leaseMs: number): NodeStatus[] | Promise<NodeStatus[]>;
}

export type NodeIdVerdict = { free: true; waitedMs: number } | { free: false; url: string };

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/** Whatever answers at the advertised URL's /healthz within a second counts as the live holder. */
async function answers(advertiseUrl: string): Promise<boolean> {
  try {
    const res = await fetch(new URL(advertiseUrl.replace(/^ws/, 'http') + '/healthz'), { signal: AbortSignal.timeout(1000) });
    await res.body?.cancel();
    return res.ok;
  } catch {
    return false;
  }
}

/** Wait until `nodeId` is free to join, or answer the live holder's URL. */
export async function claimNodeId(journal: NodeIdCheck, nodeId: string, leaseMs: number, pollMs: number): Promise<NodeIdVerdict> {
  const started = Date.now();
  let asked = false;
  for (;;) {
    const row = (await journal.status(leaseMs)).find((n) => n.node_id === nodeId);
    if (!row || !row.alive) return { free: true, waitedMs: Date.now() - started };
    if (!asked) {
      if (await answers(row.advertise_url)) return { free: false, url: row.advertise_url };
      asked = true;
    }
    await sleep(Math.max(50, Math.min(pollMs, leaseMs - row.heartbeat_age_ms)));
  }
}
