/**
 * PgSessionJournal: the PostgreSQL journal as the session host's `SessionJournal`, natively
 * asynchronous on `pg` — every read and commit is a promise the caller awaits; nothing on
 * the main thread ever waits for the network (no worker bridge, no `Atomics.wait`).
 *
 * Cluster mode keeps the leases here: every commit carries this node's epoch for the
 * session (the fencing token checked inside the commit's transaction,
 * `PgJournalStore.commitMany`); a session this node holds no lease for is refused without
 * a round trip (JournalFencedError).
 */
import { JournalError } from '../../errors.js';
import type { BatchWrite, CommittedBatch, SessionJournal, StoredSession, WriteOutcome } from '../journal.js';
import { JournalFencedError } from '../store.js';
import * as leases from './leases.js';
import { openPgStore, type Fence, type PgJournalStore, type PgStoreOptions } from './store.js';

export interface PgJournalOptions extends PgStoreOptions {
  /** Cluster mode: this node's id; commits then need a lease (see `claim`). */
  nodeId?: string;
}

export class PgSessionJournal implements SessionJournal {
  /** Cluster mode: the epoch of each session this node holds a lease on. */
  private readonly leases = new Map<string, number>();

  private constructor(
    readonly store: PgJournalStore,
    readonly nodeId: string | null,
  ) {}

  /** Open (migrate) the database; rejects with a typed JournalError. */
  static async open(options: PgJournalOptions): Promise<PgSessionJournal> {
    const { nodeId, ...store } = options;
    // Cluster mode: commits hint the other nodes (NOTIFY) so their clients get the batches live.
    const opened = await openPgStore({ ...store, notify: store.notify ?? nodeId !== undefined });
    return new PgSessionJournal(opened, nodeId ?? null);
  }

  private fence(sessionId: string, head: number): Fence | undefined {
    if (this.nodeId === null) return undefined;
    const epoch = this.leases.get(sessionId);
    if (epoch === undefined) throw new JournalFencedError(sessionId, head, `session ${sessionId}: this node holds no lease on it`);
    return { nodeId: this.nodeId, epoch };
  }

  async commitMany(writes: readonly BatchWrite[]): Promise<WriteOutcome[]> {
    const fences: Array<Fence | undefined> = [];
    const sent: BatchWrite[] = [];
    const early = new Map<number, WriteOutcome>();
    writes.forEach((w, i) => {
      try {
        fences.push(this.fence(w.sessionId, w.head));
        sent.push(w);
      } catch (err) {
        early.set(i, { ok: false, error: err as JournalError });
      }
    });
    const answers = sent.length > 0 ? await this.store.commitMany(sent, fences) : [];
    let next = 0;
    return writes.map((_, i) => early.get(i) ?? answers[next++]!);
  }

  isAdmitted(sessionId: string, submissionId: string): Promise<boolean> {
    return this.store.isAdmitted(sessionId, submissionId);
  }

  loadSession(sessionId: string): Promise<StoredSession | null> {
    return this.store.loadSession(sessionId);
  }

  loadTranscript(sessionId: string): Promise<string[]> {
    return this.store.readTranscript(sessionId);
  }

  unfinishedSessions(): Promise<string[]> {
    return this.store.unfinishedSessions();
  }

  listSessions(limit: number, before?: string): Promise<StoredSession[]> {
    return this.store.listSessions(limit, before);
  }

  readAfter(sessionId: string, after: number, limit: number): Promise<CommittedBatch[]> {
    return this.store.readAfter(sessionId, after, limit);
  }

  readBefore(sessionId: string, before: number, limit: number): Promise<CommittedBatch[]> {
    return this.store.readBefore(sessionId, before, limit);
  }

  /** Deletes the session tree and its leases; this node forgets the deleted sessions' leases. */
  async deleteSessions(sessionId: string): Promise<string[]> {
    const ids = await this.store.deleteSessions(sessionId);
    for (const id of ids) this.leases.delete(id);
    return ids;
  }

  checkpointStatus(): null {
    return null;
  }

  // ---- cluster mode: this node and its leases -------------------------------------------

  private node(): string {
    if (this.nodeId === null) throw new JournalError('not in cluster mode: no node id');
    return this.nodeId;
  }

  /** Register this node (it starts holding nothing: leases of an earlier run expire). */
  async register(advertiseUrl: string): Promise<void> {
    this.leases.clear();
    await leases.registerNode(this.store.connections, this.node(), advertiseUrl);
  }

  /** Heartbeat and renew; answers the sessions whose lease this node lost since the last one. */
  async heartbeat(leaseMs: number): Promise<string[]> {
    const asked = [...this.leases];
    const held = await leases.heartbeat(this.store.connections, this.node(), leaseMs, asked.map(([id]) => id));
    const now = new Map(held.map((l) => [l.sessionId, l.epoch]));
    const lost: string[] = [];
    for (const [id, epoch] of asked) {
      // A lease claimed again (new epoch) while the heartbeat was in flight is not lost.
      if (this.leases.get(id) !== epoch) continue;
      if (now.get(id) !== epoch) {
        lost.push(id);
        this.leases.delete(id);
      }
    }
    return lost;
  }

  /** Take the session's lease if no live node holds it (epoch + 1); false when one does. */
  async claim(sessionId: string, leaseMs: number): Promise<boolean> {
    const epoch = await leases.claimLease(this.store.connections, sessionId, this.node(), leaseMs);
    if (epoch === null) return false;
    this.leases.set(sessionId, epoch);
    return true;
  }

  holds(sessionId: string): boolean {
    return this.leases.has(sessionId);
  }

  /** Forget a lease locally (this node stops acting for the session) without a round trip. */
  forget(sessionId: string): void {
    this.leases.delete(sessionId);
  }

  /** Forget every lease at once (the database is unreachable: stop acting before the leases expire elsewhere). */
  forgetAll(): string[] {
    const ids = [...this.leases.keys()];
    this.leases.clear();
    return ids;
  }

  get leaseCount(): number {
    return this.leases.size;
  }

  /** Hand leases back (all of them with `stopping`, which also marks the node stopped). */
  async release(sessionIds: string[], stopping = false): Promise<void> {
    for (const id of sessionIds) this.leases.delete(id);
    if (stopping) this.leases.clear();
    await leases.releaseLeases(this.store.connections, this.node(), sessionIds, stopping);
  }

  owner(sessionId: string): Promise<leases.LeaseOwner | null> {
    return leases.leaseOwner(this.store.connections, sessionId);
  }

  orphans(leaseMs: number): Promise<{ sessions: string[]; liveNodes: string[] }> {
    return leases.orphans(this.store.connections, leaseMs);
  }

  status(leaseMs: number): Promise<leases.NodeStatus[]> {
    return leases.clusterStatus(this.store.connections, leaseMs);
  }

  /** The cluster's client token (generated once and kept in the database). */
  token(candidate?: string): Promise<string> {
    return leases.clusterToken(this.store.connections, candidate);
  }

  close(): Promise<void> {
    return this.store.close();
  }
}
