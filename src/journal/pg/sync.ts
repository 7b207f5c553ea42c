/**
 * PgSyncJournal: the PostgreSQL journal behind the same synchronous interface as the
 * SQLite one (`SessionJournal`), so the session core runs unchanged on either. Each call
 * is run by a worker thread that owns the pool (worker.ts); the calling thread waits for
 * the answer (synckit: Atomics.wait on a shared buffer), as better-sqlite3 waits for its
 * disk. The wait is bounded: statements time out in the server (statement_timeout) and
 * the call itself after `callTimeoutMs`.
 *
 * Cluster mode keeps the leases here: every commit carries this node's epoch for the
 * session (the fencing token checked in the commit's transaction); a session this node
 * holds no lease for is refused without a round trip (JournalFencedError).
 */
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { createSyncFn } from 'synckit';
import { JournalError } from '../../errors.js';
import { committedBatch } from '../batch.js';
import type { CheckpointStatus } from '../checkpointer.js';
import type { BatchWrite, CommittedBatch, SessionJournal, StoredSession, WriteOutcome } from '../journal.js';
import { JournalConflictError, JournalFencedError, JournalUnavailableError } from '../store.js';
import type { Lease, LeaseOwner, NodeStatus } from './leases.js';
import type { Fence, PgStoreOptions } from './store.js';
import type { CallName, WireBatch, WireError, WorkerAnswer, WorkerCalls } from './worker.js';

export interface PgSyncOptions extends PgStoreOptions {
  /** Cluster mode: this node's id; commits then need a lease (see `claim`). */
  nodeId?: string;
  /** Longest a call may block the caller (default: twice the statement timeout plus the connect timeout). */
  callTimeoutMs?: number;
}

/**
 * The worker's compiled module. Under a TypeScript runner (tests import src/*.ts) the
 * worker still runs the compiled dist/ copy: a worker thread cannot load .ts files.
 */
function workerPath(): string {
  const here = fileURLToPath(import.meta.url);
  if (here.endsWith('.js')) return here.replace(/sync\.js$/, 'worker.js');
  const compiled = here.replace(/[\\/]src[\\/]journal[\\/]pg[\\/]sync\.ts$/, '/dist/src/journal/pg/worker.js');
  if (!existsSync(compiled)) throw new JournalError(`the PostgreSQL journal worker is not built (${compiled}): run npm run build`);
  return compiled;
}

type Call = (name: CallName, args: unknown[]) => WorkerAnswer<unknown>;

function fromWire(e: WireError): JournalError {
  switch (e.kind) {
    case 'fenced':
      return new JournalFencedError(e.sessionId ?? '', e.head ?? 0, e.message);
    case 'conflict':
      return new JournalConflictError(e.sessionId ?? '', e.head ?? 0, e.message);
    case 'unavailable':
      return new JournalUnavailableError(e.message, e.outcomeUnknown ?? false);
    default:
      return new JournalError(e.message);
  }
}

const toBatches = (sessionId: string, rows: WireBatch[]): CommittedBatch[] =>
  rows.map(([seq, at, events]) => committedBatch(sessionId, seq, at, events));

export class PgSyncJournal implements SessionJournal {
  private readonly call: Call;
  private closed = false;
  /** Cluster mode: the epoch of each session this node holds a lease on. */
  private readonly leases = new Map<string, number>();

  private constructor(
    call: Call,
    readonly nodeId: string | null,
  ) {
    this.call = call;
  }

  /** Start the worker and open (migrate) the database; throws a typed JournalError. */
  static open(options: PgSyncOptions): PgSyncJournal {
    const statement = options.statementTimeoutMs ?? 5000;
    const timeout = options.callTimeoutMs ?? 2 * statement + (options.connectTimeoutMs ?? 5000);
    const fn = createSyncFn(workerPath(), { timeout }) as unknown as Call;
    const journal = new PgSyncJournal(fn, options.nodeId ?? null);
    const { nodeId: _n, callTimeoutMs: _c, onError: _e, ...store } = options;
    // Cluster mode: commits hint the other nodes (NOTIFY) so their clients get the batches live.
    journal.run('open', [{ ...store, notify: store.notify ?? options.nodeId !== undefined }]);
    return journal;
  }

  private run<N extends CallName>(name: N, args: Parameters<WorkerCalls[N]>): Awaited<ReturnType<WorkerCalls[N]>> {
    if (this.closed && name !== 'close') throw new JournalError('journal is closed');
    let answer: WorkerAnswer<unknown>;
    try {
      answer = this.call(name, args);
    } catch (err) {
      // The worker did not answer in time (or died): nothing is known of a commit's outcome.
      throw new JournalUnavailableError(`journal call ${name} failed: ${(err as Error).message}`, name.startsWith('commit'), err);
    }
    if (!answer.ok) throw fromWire(answer.error);
    return answer.value as Awaited<ReturnType<WorkerCalls[N]>>;
  }

  private fence(sessionId: string, head: number): Fence | undefined {
    if (this.nodeId === null) return undefined;
    const epoch = this.leases.get(sessionId);
    if (epoch === undefined) throw new JournalFencedError(sessionId, head, `session ${sessionId}: this node holds no lease on it`);
    return { nodeId: this.nodeId, epoch };
  }

  commit(write: BatchWrite): CommittedBatch[] {
    const fence = this.fence(write.sessionId, write.head);
    return toBatches(write.sessionId, this.run('commit', [write, fence]));
  }

  commitMany(writes: readonly BatchWrite[]): WriteOutcome[] {
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
    let answers: WriteOutcome[] = [];
    if (sent.length > 0) {
      try {
        answers = this.run('commitMany', [sent, fences]).map((o, i) =>
          o.ok ? { ok: true, batches: toBatches(sent[i]!.sessionId, o.batches) } : { ok: false, error: fromWire(o.error) },
        );
      } catch (err) {
        answers = sent.map(() => ({ ok: false, error: err as JournalError }));
      }
    }
    let next = 0;
    return writes.map((_, i) => early.get(i) ?? answers[next++]!);
  }

  isAdmitted(sessionId: string, submissionId: string): boolean {
    return this.run('isAdmitted', [sessionId, submissionId]);
  }

  loadSession(sessionId: string): StoredSession | null {
    return this.run('loadSession', [sessionId]);
  }

  loadTranscript(sessionId: string): string[] {
    return this.run('loadTranscript', [sessionId]);
  }

  unfinishedSessions(): string[] {
    return this.run('unfinishedSessions', []);
  }

  /** Deletes the session tree and its leases; this node forgets the deleted sessions' leases. */
  deleteSessions(sessionId: string): string[] {
    const ids = this.run('deleteSessions', [sessionId]);
    for (const id of ids) this.leases.delete(id);
    return ids;
  }

  listSessions(limit: number, before?: string): StoredSession[] {
    return this.run('listSessions', [limit, before]);
  }

  readAfter(sessionId: string, after: number, limit: number): CommittedBatch[] {
    return toBatches(sessionId, this.run('readAfter', [sessionId, after, limit]));
  }

  readBefore(sessionId: string, before: number, limit: number): CommittedBatch[] {
    return toBatches(sessionId, this.run('readBefore', [sessionId, before, limit]));
  }

  checkpointStatus(): CheckpointStatus | null {
    return null;
  }

  // ---- cluster mode: this node and its leases -------------------------------------------

  private node(): string {
    if (this.nodeId === null) throw new JournalError('not in cluster mode: no node id');
    return this.nodeId;
  }

  /** Register this node (it starts holding nothing: leases of an earlier run expire). */
  register(advertiseUrl: string): void {
    this.leases.clear();
    this.run('register', [this.node(), advertiseUrl]);
  }

  /** Heartbeat and renew; answers the sessions whose lease this node lost since the last one. */
  heartbeat(leaseMs: number): string[] {
    const held = this.run('heartbeat', [this.node(), leaseMs, [...this.leases.keys()]]) as Lease[];
    const now = new Map(held.map((l) => [l.sessionId, l.epoch]));
    const lost: string[] = [];
    for (const [id, epoch] of this.leases) {
      if (now.get(id) !== epoch) {
        lost.push(id);
        this.leases.delete(id);
      }
    }
    return lost;
  }

  /** Take the session's lease if no live node holds it (epoch + 1); false when one does. */
  claim(sessionId: string, leaseMs: number): boolean {
    const epoch = this.run('claim', [sessionId, this.node(), leaseMs]);
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
  release(sessionIds: string[], stopping = false): void {
    for (const id of sessionIds) this.leases.delete(id);
    if (stopping) this.leases.clear();
    this.run('release', [this.node(), sessionIds, stopping]);
  }

  owner(sessionId: string): LeaseOwner | null {
    return this.run('owner', [sessionId]);
  }

  orphans(leaseMs: number): { sessions: string[]; liveNodes: string[] } {
    return this.run('orphans', [leaseMs]);
  }

  status(leaseMs: number): NodeStatus[] {
    return this.run('status', [leaseMs]);
  }

  /** The cluster's client token (generated once and kept in the database). */
  token(candidate?: string): string {
    return this.run('token', [candidate]);
  }

  close(): void {
    if (this.closed) return;
    this.closed = true;
    try {
      this.run('close', []);
    } catch {
      /* the worker is gone with the process */
    }
  }
}
