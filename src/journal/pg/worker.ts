/**
 * The worker thread behind PgSyncJournal (sync.ts): it owns the PostgreSQL pool and runs
 * each call the main thread makes — journal reads and commits, lease statements —
 * answering plain data (batches as rows, failures as `WireError`s) that the main thread
 * turns back into CommittedBatches and typed errors. synckit's `runAsWorker` blocks the
 * caller until the answer is posted.
 */
import { runAsWorker } from 'synckit';
import { JournalError } from '../../errors.js';
import type { BatchWrite, CommittedBatch, StoredSession } from '../journal.js';
import { JournalConflictError, JournalFencedError, JournalUnavailableError } from '../store.js';
import * as leases from './leases.js';
import { openPgStore, type Fence, type PgJournalStore, type PgStoreOptions } from './store.js';

/** A failure crossing the thread boundary. */
export interface WireError {
  kind: 'fenced' | 'conflict' | 'unavailable' | 'journal';
  message: string;
  sessionId?: string;
  head?: number;
  outcomeUnknown?: boolean;
}

/** A batch crossing the thread boundary: [sequence, committed_at, events JSON]. */
export type WireBatch = [number, number, string];

export type WireOutcome = { ok: true; batches: WireBatch[] } | { ok: false; error: WireError };

export type WorkerAnswer<T> = { ok: true; value: T } | { ok: false; error: WireError };

/** Every call the main thread can make: name → (arguments) → answer. */
export interface WorkerCalls {
  open(options: PgStoreOptions): Promise<number>;
  commit(write: BatchWrite, fence: Fence | undefined): Promise<WireBatch[]>;
  commitMany(writes: BatchWrite[], fences: Array<Fence | undefined>): Promise<WireOutcome[]>;
  loadSession(sessionId: string): Promise<StoredSession | null>;
  loadTranscript(sessionId: string): Promise<string[]>;
  isAdmitted(sessionId: string, submissionId: string): Promise<boolean>;
  unfinishedSessions(): Promise<string[]>;
  deleteSessions(sessionId: string): Promise<string[]>;
  listSessions(limit: number, before: string | undefined): Promise<StoredSession[]>;
  readAfter(sessionId: string, after: number, limit: number): Promise<WireBatch[]>;
  readBefore(sessionId: string, before: number, limit: number): Promise<WireBatch[]>;
  register(nodeId: string, advertiseUrl: string): Promise<void>;
  heartbeat(nodeId: string, leaseMs: number, sessionIds: string[]): Promise<leases.Lease[]>;
  claim(sessionId: string, nodeId: string, leaseMs: number): Promise<number | null>;
  release(nodeId: string, sessionIds: string[], stopping: boolean): Promise<void>;
  owner(sessionId: string): Promise<leases.LeaseOwner | null>;
  orphans(leaseMs: number): Promise<{ sessions: string[]; liveNodes: string[] }>;
  status(leaseMs: number): Promise<leases.NodeStatus[]>;
  token(candidate: string | undefined): Promise<string>;
  close(): Promise<void>;
}

export type CallName = keyof WorkerCalls;

let store: PgJournalStore | null = null;

const wireBatches = (batches: CommittedBatch[], events: string[]): WireBatch[] =>
  batches.map((b, i) => [b.sequence, b.committed_at, events[i]!]);

function open(): PgJournalStore {
  if (!store) throw new JournalError('the PostgreSQL journal is not open');
  return store;
}

const CALLS: WorkerCalls = {
  async open(options) {
    store = await openPgStore(options);
    return store.schemaVersion();
  },
  async commit(write, fence) {
    return wireBatches(await open().commit(write, fence), write.batches);
  },
  async commitMany(writes, fences) {
    const outcomes = await open().commitMany(writes, fences);
    return outcomes.map((o, i): WireOutcome => (o.ok ? { ok: true, batches: wireBatches(o.batches, writes[i]!.batches) } : { ok: false, error: toWire(o.error) }));
  },
  loadSession: (id) => open().loadSession(id),
  loadTranscript: (id) => open().readTranscript(id),
  isAdmitted: (id, sub) => open().isAdmitted(id, sub),
  unfinishedSessions: () => open().unfinishedSessions(),
  deleteSessions: (id) => open().deleteSessions(id),
  listSessions: (limit, before) => open().listSessions(limit, before),
  readAfter: (id, after, limit) => open().rowsAfter(id, after, limit),
  readBefore: (id, before, limit) => open().rowsBefore(id, before, limit),
  register: (nodeId, url) => leases.registerNode(open().connections, nodeId, url),
  heartbeat: (nodeId, leaseMs, ids) => leases.heartbeat(open().connections, nodeId, leaseMs, ids),
  claim: (id, nodeId, leaseMs) => leases.claimLease(open().connections, id, nodeId, leaseMs),
  release: (nodeId, ids, stopping) => leases.releaseLeases(open().connections, nodeId, ids, stopping),
  owner: (id) => leases.leaseOwner(open().connections, id),
  orphans: (leaseMs) => leases.orphans(open().connections, leaseMs),
  status: (leaseMs) => leases.clusterStatus(open().connections, leaseMs),
  token: (candidate) => leases.clusterToken(open().connections, candidate),
  async close() {
    const s = store;
    store = null;
    await s?.close();
  },
};

export function toWire(err: unknown): WireError {
  const message = err instanceof Error ? err.message : String(err);
  if (err instanceof JournalFencedError) return { kind: 'fenced', message, sessionId: err.sessionId, head: err.head };
  if (err instanceof JournalConflictError) return { kind: 'conflict', message, sessionId: err.sessionId, head: err.head };
  if (err instanceof JournalUnavailableError) return { kind: 'unavailable', message, outcomeUnknown: err.outcomeUnknown };
  return { kind: 'journal', message };
}

runAsWorker(async (name: CallName, args: unknown[]): Promise<WorkerAnswer<unknown>> => {
  try {
    const fn = CALLS[name] as (...a: unknown[]) => Promise<unknown>;
    return { ok: true, value: await fn(...args) };
  } catch (err) {
    return { ok: false, error: toWire(err) };
  }
});
