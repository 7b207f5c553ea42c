/**
 * ClusterNode: one node of a cluster on one PostgreSQL (docs/cluster.md). It heartbeats
 * and renews its leases every `heartbeat_ms`; stops a session's actor the moment its lease
 * is found gone (fenced), and all of them when it cannot reach the database for long
 * enough that its leases may expire elsewhere; takes over unfinished sessions nobody
 * holds (spread over the live nodes by a hash of the session id); listens for commit
 * hints to feed its RemoteSessions; and routes submissions: run here when this node
 * holds (or can take) the lease, else forward to the owner, holding while the owner is
 * dead and its lease not yet expired.
 */
import { createHash } from 'node:crypto';
import type { Logger } from 'pino';
import type { AdmissionOutcome, NodeInfo, Submission } from '../../protocol/index.js';
import { HintListener } from '../journal/pg/listen.js';
import type { StoredSession } from '../journal/journal.js';
import type { PgSessionJournal } from '../journal/pg/journal.js';
import type { SubmitAnswer } from '../session/api.js';
import type { SessionHost, SessionOwnership } from '../session/host.js';
import { PeerLinks, PeerUnavailableError } from './peer.js';
import { RemoteSession } from './remote.js';
import { CHILD_SESSION_PREFIX } from '../session/subagent.js';

export interface ClusterSettings {
  nodeId: string;
  leaseMs: number;
  heartbeatMs: number;
  /** The secret other nodes' links present (and this node's links send). */
  secret: string;
  /** For the LISTEN connection. */
  url: string;
  /** How long a submission is held while its session has no live owner (default 30 s). */
  holdMs?: number;
}

const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms).unref());

export class ClusterNode implements SessionOwnership {
  private host: SessionHost | null = null;
  private timer: NodeJS.Timeout | null = null;
  private readonly listener: HintListener;
  private readonly peers: PeerLinks;
  private readonly remotes = new Map<string, RemoteSession>();
  /** When each orphan was first seen unclaimed (after a while any node takes it, not just its hashed one). */
  private readonly orphanSeen = new Map<string, number>();
  /** Monotonic time of the last heartbeat that reached the database (its start). */
  private lastBeatOk = performance.now();
  private stopped = false;
  private takeoversValue = 0;
  private scanSoon: NodeJS.Immediate | null = null;
  /** The last `liveNodes()` read (monotonic ms). */
  private nodesRead: { at: number; nodes: NodeInfo[] } | null = null;
  /** A heartbeat (and its scan) is in flight: the next interval skips instead of piling up. */
  private beating = false;
  private scanning = false;
  /** Sessions being claimed and hydrated here (take): a second take awaits the first. */
  private readonly taking = new Map<string, Promise<boolean>>();

  constructor(
    readonly journal: PgSessionJournal,
    private readonly settings: ClusterSettings,
    private readonly log?: Logger,
  ) {
    this.listener = new HintListener({
      url: settings.url,
      applicationName: `agentd:${settings.nodeId}:listen`,
      onBatch: (id, seq) => this.remotes.get(id)?.hint(seq),
      onLeases: () => this.requestScan(),
      onDeleted: (id, deleted) => this.deleted(id, deleted),
      onConnected: () => {
        for (const r of this.remotes.values()) r.hint();
        this.requestScan();
      },
      onLost: (err) => log?.warn({ err: err.message }, 'cluster LISTEN connection lost; reconnecting'),
    });
    this.peers = new PeerLinks(settings.secret, settings.nodeId);
  }

  /**
   * A session tree was deleted (by this node or another): a session of it running here is
   * stopped at once, its remote handles dropped, and the clients attached here are told.
   */
  private deleted(sessionId: string, deleted: string[]): void {
    // The clients first (they are detached), then the actors: no "stopped" notice before the delete's.
    this.host?.announceDeleted(sessionId, deleted);
    for (const id of deleted) {
      this.remotes.delete(id);
      this.host?.fence(id, `session ${id} was deleted`);
      this.journal.forget(id);
    }
  }

  get nodeId(): string {
    return this.settings.nodeId;
  }

  get sessionsOwned(): number {
    return this.journal.leaseCount;
  }

  /** Unfinished sessions this node took over from nodes that stopped (the takeover scan), since it started. */
  get takeovers(): number {
    return this.takeoversValue;
  }

  /** Join the cluster: register at `advertiseUrl`, heartbeat, listen, take over orphans. */
  async start(host: SessionHost, advertiseUrl: string): Promise<void> {
    this.host = host;
    await this.journal.register(advertiseUrl);
    this.lastBeatOk = performance.now();
    this.listener.start();
    this.timer = setInterval(() => void this.beat(), this.settings.heartbeatMs);
    this.timer.unref();
    void this.scan();
  }

  // ---- SessionOwnership (called by the host) ----------------------------------------------

  claimNew(sessionId: string): Promise<boolean> {
    return this.journal.claim(sessionId, this.settings.leaseMs);
  }

  acquire(sessionId: string): boolean | Promise<boolean> {
    return this.journal.holds(sessionId) || this.journal.claim(sessionId, this.settings.leaseMs);
  }

  evicted(sessionId: string): void {
    this.journal.release([sessionId]).catch((err: unknown) => {
      this.journal.forget(sessionId);
      this.log?.warn({ err, session_id: sessionId }, 'could not hand back the lease of an evicted session (it expires)');
    });
  }

  fenced(sessionId: string): void {
    this.journal.forget(sessionId);
  }

  // ---- heartbeats, fencing, takeover ---------------------------------------------------------

  private async beat(): Promise<void> {
    if (this.stopped || !this.host) return;
    // The last heartbeat has not answered (a hung database): it never piles up, but the
    // silence still counts against the leases.
    if (this.beating) return this.checkSilence(new Error('the last heartbeat has not answered'));
    this.beating = true;
    try {
      await this.beatOnce();
    } finally {
      this.beating = false;
    }
  }

  private async beatOnce(): Promise<void> {
    const started = performance.now();
    let lost: string[];
    try {
      lost = await this.journal.heartbeat(this.settings.leaseMs);
      this.lastBeatOk = started;
    } catch (err) {
      this.checkSilence(err as Error);
      return;
    }
    for (const id of lost) {
      this.log?.warn({ session_id: id }, 'lease lost: stopping the session here');
      this.host?.fence(id, `session ${id} moved to another node; attach again to follow it there`);
    }
    // Not awaited: a takeover (hydration, recovery) never holds the next heartbeat back.
    void this.scan();
  }

  /** Stop acting before the leases can expire elsewhere (one heartbeat of margin). */
  private checkSilence(err: Error): void {
    if (!this.host) return;
    const silent = performance.now() - this.lastBeatOk;
    this.log?.warn({ err: err.message, silent_ms: Math.round(silent) }, 'cluster heartbeat failed');
    if (silent >= this.settings.leaseMs - this.settings.heartbeatMs && this.journal.leaseCount > 0) {
      const ids = this.journal.forgetAll();
      this.log?.error({ sessions: ids.length }, 'cannot reach the database: giving up every lease');
      for (const id of ids) this.host.fence(id, `this node lost its database connection; session ${id} continues on another node`);
    }
  }

  private requestScan(): void {
    if (this.scanSoon || this.stopped) return;
    this.scanSoon = setImmediate(() => {
      this.scanSoon = null;
      void this.scan();
    });
  }

  /** Take over unfinished sessions nobody holds: each live node its hashed share; any node those left waiting too long. */
  private async scan(): Promise<void> {
    if (this.stopped || !this.host || this.scanning) return;
    this.scanning = true;
    try {
      await this.scanOnce();
    } catch (err) {
      this.log?.warn({ err: (err as Error).message }, 'cluster takeover scan failed');
    } finally {
      this.scanning = false;
    }
  }

  private async scanOnce(): Promise<void> {
    const found = await this.journal.orphans(this.settings.leaseMs);
    if (this.stopped || !this.host) return;
    const now = performance.now();
    const live = found.liveNodes.includes(this.nodeId) ? found.liveNodes : [...found.liveNodes, this.nodeId].sort();
    const seen = new Map<string, number>();
    for (const id of found.sessions) {
      const first = this.orphanSeen.get(id) ?? now;
      seen.set(id, first);
      // A subagent's child is left a while to whichever node takes its parent (the parent's
      // recovery hydrates it there); then, like any orphan, to its hashed node, then to anyone.
      const grace = id.startsWith(CHILD_SESSION_PREFIX) ? 3 * this.settings.heartbeatMs : 0;
      const waited = now - first;
      const mine = live[shard(id, live.length)] === this.nodeId;
      if (waited < grace || (!mine && waited < grace + 2 * this.settings.heartbeatMs)) continue;
      if (await this.take(id)) this.takeoversValue++;
    }
    this.orphanSeen.clear();
    for (const [id, t] of seen) if (!this.host?.resident(id)) this.orphanSeen.set(id, t);
  }

  /** Claim and hydrate (recover) a session; false when another node holds it. */
  take(sessionId: string): Promise<boolean> {
    let taking = this.taking.get(sessionId);
    if (!taking) {
      taking = this.takeNow(sessionId).finally(() => this.taking.delete(sessionId));
      this.taking.set(sessionId, taking);
    }
    return taking;
  }

  private async takeNow(sessionId: string): Promise<boolean> {
    if (!this.host || this.stopped) return false;
    if (this.host.resident(sessionId)) {
      if (this.journal.holds(sessionId)) return true;
      // An actor left from a lease this node no longer holds: its state may be stale. Start afresh.
      this.host.fence(sessionId, `session ${sessionId} is restarting from the journal`);
    }
    let claimed: boolean;
    try {
      claimed = await this.journal.claim(sessionId, this.settings.leaseMs);
    } catch (err) {
      this.log?.warn({ err: (err as Error).message, session_id: sessionId }, 'could not claim a session');
      return false;
    }
    if (!claimed || !this.host || this.stopped) return false;
    this.log?.info({ session_id: sessionId }, 'took over session');
    await this.host.recover(sessionId);
    return true;
  }

  // ---- sessions owned elsewhere ----------------------------------------------------------------

  /** The handle of a session another node runs (one per session while watched). */
  remote(sessionId: string, stored: StoredSession): RemoteSession {
    let r = this.remotes.get(sessionId);
    if (r) r.seen(stored);
    else {
      r = new RemoteSession(sessionId, stored, {
        journal: this.journal,
        route: (id, sub, onAdmitted, onRejected) => this.route(id, sub, onAdmitted, onRejected),
        idle: (s) => {
          if (this.remotes.get(s.id) === s) this.remotes.delete(s.id);
        },
        onError: (err) => this.log?.error({ err, session_id: sessionId }, 'reading a remote session failed'),
      });
      this.remotes.set(sessionId, r);
    }
    return r;
  }

  /**
   * Run a submission where the session runs: here if this node holds or can take its
   * lease, else on its owner over a peer link. While the owner is dead (lease not yet
   * expired, link refused) the submission is held and retried, not refused.
   */
  async route(
    sessionId: string,
    submission: Submission,
    onAdmitted?: (outcome: AdmissionOutcome) => void,
    onRejected?: (message: string, code?: 'busy' | 'internal') => void,
  ): Promise<SubmitAnswer> {
    const deadline = performance.now() + (this.settings.holdMs ?? 30_000);
    let wait = 50;
    for (;;) {
      if (this.stopped || !this.host) return { ok: false, code: 'stopped', message: 'this node is shutting down' };
      const local = this.host.resident(sessionId);
      if (local && this.journal.holds(sessionId)) return local.submit(submission, onAdmitted, onRejected);
      let owner;
      try {
        owner = await this.journal.owner(sessionId);
      } catch (err) {
        owner = undefined;
        this.log?.warn({ err: (err as Error).message }, 'lease lookup failed; holding the submission');
      }
      if (owner !== undefined) {
        if (!owner || !owner.live || owner.nodeId === this.nodeId) {
          if (await this.take(sessionId)) {
            const here = this.host.resident(sessionId);
            if (here) return here.submit(submission, onAdmitted, onRejected);
          }
        } else {
          try {
            return await this.peers.forward(owner.advertiseUrl, sessionId, submission, {
              onAdmitted: (o) => onAdmitted?.(o),
              onRejected: (m, c) => onRejected?.(m, c),
              // The owner died between queued and admitted: ask whoever runs the session now.
              // A message is admitted once (its id), so asking again cannot admit it twice.
              onLost: () => void this.again(sessionId, submission, onAdmitted, onRejected),
            });
          } catch (err) {
            if (!(err instanceof PeerUnavailableError)) throw err;
            this.log?.debug({ err: err.message, owner: owner.nodeId }, 'owner unreachable; holding the submission');
          }
        }
      }
      if (performance.now() > deadline) {
        return { ok: false, code: 'stopped', message: `session ${sessionId} has no reachable owner; try again` };
      }
      await sleep(wait);
      wait = Math.min(500, wait * 2);
    }
  }

  private async again(
    sessionId: string,
    submission: Submission,
    onAdmitted?: (outcome: AdmissionOutcome) => void,
    onRejected?: (message: string, code?: 'busy' | 'internal') => void,
  ): Promise<void> {
    if (submission.op.type !== 'message') return;
    const answer = await this.route(sessionId, submission, onAdmitted, onRejected).catch((err: Error) => ({ ok: false as const, message: err.message }));
    if (!answer.ok) onRejected?.(answer.message, 'internal');
  }

  /** Leave: stop heartbeats and links, hand every lease back (after the host committed its last writes). */
  async close(): Promise<void> {
    if (this.stopped) return;
    this.stopped = true;
    if (this.timer) clearInterval(this.timer);
    if (this.scanSoon) clearImmediate(this.scanSoon);
    this.peers.close();
    await this.listener.close();
  }

  /**
   * The live nodes (heartbeating, not stopped) and their advertised URLs, for `list_nodes`:
   * clients learn where to go when their node dies. Read from the database at most once a
   * heartbeat (many clients reconnecting at once ask once). Throws when the database cannot
   * be read and nothing was read before.
   */
  async liveNodes(): Promise<NodeInfo[]> {
    const now = performance.now();
    if (!this.nodesRead || now - this.nodesRead.at >= this.settings.heartbeatMs) {
      const live = (await this.journal.status(this.settings.leaseMs)).filter((n) => n.alive && !n.stopped);
      this.nodesRead = { at: now, nodes: live.map((n) => ({ node_id: n.node_id, url: n.advertise_url, self: false })) };
    }
    return this.nodesRead.nodes.map((n) => ({ ...n, self: n.node_id === this.nodeId }));
  }

  /** SIGTERM (the host is closing): the leases go back at once and the node is marked stopped (others take over now). */
  async leaving(): Promise<void> {
    try {
      await this.journal.release([], true);
    } catch (err) {
      this.log?.warn({ err: (err as Error).message }, 'could not hand the leases back (they expire)');
    }
  }
}

/** The live node (index into the sorted list) that should take a session first. */
function shard(sessionId: string, nodes: number): number {
  if (nodes <= 1) return 0;
  return createHash('sha1').update(sessionId).digest().readUInt32BE(0) % nodes;
}
