/**
 * WalCheckpointer: moves the journal's WAL into the database file off the main thread.
 * A worker thread with its own SQLite connection runs `wal_checkpoint(PASSIVE)` when
 * asked (at most one at a time; a request while one runs is remembered and runs next), so
 * a checkpoint never blocks the event loop, whatever the size of the WAL. Each run's
 * duration and the WAL's size are kept; a WAL that grows past `behindFrames` because
 * checkpoints cannot keep up with the commits is reported (`status().behind`, shown in /healthz), not hidden.
 */
import { createRequire } from 'node:module';
import { Worker } from 'node:worker_threads';

/** What /healthz shows of the journal's checkpoints. */
export interface CheckpointStatus {
  /** Checkpoints run so far. */
  runs: number;
  /** Duration of the last and of the longest run, in ms (in the worker, not the event loop). */
  last_ms: number;
  max_ms: number;
  /** WAL frames after the last run, and how many of them it could not move yet. */
  wal_frames: number;
  wal_frames_pending: number;
  /** The WAL has grown past `behindFrames` frames (it restarts only once fully checkpointed): checkpoints are not keeping up. */
  behind: boolean;
  last_error: string | null;
}

export interface CheckpointerOptions {
  /** WAL frames past which the checkpoints count as behind (default 65,536: 256 MiB of 4 KiB pages). */
  behindFrames?: number;
  /** Told once each time the WAL falls behind (a log line). */
  onBehind?: (status: CheckpointStatus) => void;
}

interface RunResult {
  ok: boolean;
  ms: number;
  log?: number;
  checkpointed?: number;
  error?: string;
}

/** The worker's code (CommonJS, evaluated): one connection, one checkpoint per message. */
const WORKER_SOURCE = `
const { parentPort, workerData } = require('node:worker_threads');
const Database = require(workerData.sqlite);
let db = null;
parentPort.on('message', () => {
  const started = performance.now();
  try {
    db ??= new Database(workerData.path, { fileMustExist: true });
    const [row] = db.pragma('wal_checkpoint(PASSIVE)');
    parentPort.postMessage({ ok: row.busy === 0, ms: performance.now() - started, log: row.log, checkpointed: row.checkpointed,
      error: row.busy === 0 ? undefined : 'checkpoint busy' });
  } catch (err) {
    parentPort.postMessage({ ok: false, ms: performance.now() - started, error: String(err && err.message || err) });
  }
});
`;

export class WalCheckpointer {
  private worker: Worker | null = null;
  private running = false;
  private again = false;
  private closed = false;
  private readonly current: CheckpointStatus = {
    runs: 0,
    last_ms: 0,
    max_ms: 0,
    wal_frames: 0,
    wal_frames_pending: 0,
    behind: false,
    last_error: null,
  };
  private readonly waiters: Array<() => void> = [];

  constructor(
    private readonly path: string,
    private readonly options: CheckpointerOptions = {},
  ) {}

  /** Ask for a checkpoint; runs now, or after the one running. */
  request(): void {
    if (this.closed) return;
    if (this.running) {
      this.again = true;
      return;
    }
    this.running = true;
    this.again = false;
    this.start().postMessage(0);
  }

  status(): CheckpointStatus {
    return { ...this.current };
  }

  /** Resolves when no checkpoint is running or asked for (tests, maintenance). */
  idle(): Promise<void> {
    if (!this.running) return Promise.resolve();
    return new Promise((resolve) => this.waiters.push(resolve));
  }

  /** Stop the worker (a run in progress is abandoned; the WAL stays valid). */
  close(): void {
    this.closed = true;
    const worker = this.worker;
    this.worker = null;
    if (worker) void worker.terminate();
    for (const w of this.waiters.splice(0)) w();
  }

  private start(): Worker {
    if (this.worker) return this.worker;
    const sqlite = createRequire(import.meta.url).resolve('better-sqlite3');
    const worker = new Worker(WORKER_SOURCE, { eval: true, workerData: { path: this.path, sqlite } });
    worker.unref();
    worker.on('message', (result: RunResult) => this.finished(result));
    worker.on('error', (err) => {
      this.worker = null;
      this.finished({ ok: false, ms: 0, error: `checkpoint worker failed: ${err.message}` });
    });
    this.worker = worker;
    return worker;
  }

  private finished(result: RunResult): void {
    const s = this.current;
    s.runs++;
    s.last_ms = result.ms;
    s.max_ms = Math.max(s.max_ms, result.ms);
    s.last_error = result.ok ? null : (result.error ?? 'checkpoint failed');
    if (result.log !== undefined && result.checkpointed !== undefined && result.log >= 0) {
      s.wal_frames = result.log;
      s.wal_frames_pending = Math.max(0, result.log - result.checkpointed);
    }
    const wasBehind = s.behind;
    s.behind = s.wal_frames > (this.options.behindFrames ?? 65_536);
    if (s.behind && !wasBehind) this.options.onBehind?.({ ...s });
    this.running = false;
    if (this.again && !this.closed) this.request();
    else for (const w of this.waiters.splice(0)) w();
  }
}
