/**
 * ClusterHost: the session API of a cluster node (what the server programs against, as
 * on one machine). Sessions this node runs are the SessionHost's; any other session is a
 * RemoteSession fed from the shared journal. Opening a session nobody holds takes it
 * (docs/cluster.md: "a session nobody owns is taken by the node that needs it").
 */
import type { CreateSessionConfig, SessionDescriptor } from '../../protocol/index.js';
import type { CommittedBatch, ListOptions, SessionHandle, SessionHostApi } from '../session/api.js';
import type { SessionHost } from '../session/host.js';
import type { ClusterNode } from './node.js';

export class ClusterHost implements SessionHostApi {
  constructor(
    readonly host: SessionHost,
    readonly node: ClusterNode,
  ) {}

  create(config: CreateSessionConfig): Promise<SessionDescriptor> {
    return this.host.create(config);
  }

  list(options: ListOptions): Promise<{ sessions: SessionDescriptor[]; next_before: string | null }> {
    return this.host.list(options);
  }

  /** A resident session this node holds the lease on (no journal read), else undefined. */
  ready(sessionId: string): SessionHandle | undefined {
    return this.node.journal.holds(sessionId) ? this.host.ready(sessionId) : undefined;
  }

  async open(sessionId: string): Promise<SessionHandle | null> {
    const { journal } = this.node;
    const local = this.host.resident(sessionId);
    if (local && journal.holds(sessionId)) return this.host.open(sessionId);
    const stored = await journal.loadSession(sessionId);
    if (!stored) return null;
    const owner = await journal.owner(sessionId);
    if ((!owner || !owner.live || owner.nodeId === this.node.nodeId) && (await this.node.take(sessionId))) {
      const taken = this.host.resident(sessionId);
      if (taken) return taken;
    }
    return this.node.remote(sessionId, stored);
  }

  /**
   * Delete on this node: a session running here stops first; the journal's delete removes
   * the rows and the lease in one transaction, so a node running it elsewhere is fenced at
   * its next commit or heartbeat (docs/cluster.md).
   */
  delete(sessionId: string, options?: { force?: boolean }): Promise<string[]> {
    return this.host.delete(sessionId, options);
  }

  onDeleted(listener: (sessionId: string, deleted: string[]) => void): () => void {
    return this.host.onDeleted(listener);
  }

  readAfter(sessionId: string, after: number, limit: number): Promise<CommittedBatch[]> {
    return this.host.readAfter(sessionId, after, limit);
  }

  readBefore(sessionId: string, before: number, limit: number): Promise<CommittedBatch[]> {
    return this.host.readBefore(sessionId, before, limit);
  }

  /** Commit what is pending, hand every lease back at once, leave the cluster. */
  async close(): Promise<void> {
    await this.node.close();
    // Stops each session (its last commit), then hands the leases back (node.leaving), then closes the journal.
    await this.host.close();
  }
}
