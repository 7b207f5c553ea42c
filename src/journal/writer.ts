/**
 * SharedWriter: one journal writer for all sessions. A session with a pending group
 * commit (streamed deltas, a model step's end) hands itself to the writer; once per tick
 * the writer takes every waiting session's write and commits them together with one
 * `JournalWriter.commitMany` — one transaction per tick instead of one per session, and
 * one timer for all of them. Only after that commit does it settle each write, in the
 * order taken: each session then notifies its subscribers in sequence order, or (its
 * write alone failed) rolls back. A tick takes at most `maxBytes` of event JSON; what is
 * left goes into the next tick, started at once.
 *
 * The storage call may answer a Promise (a network database): then the next tick starts
 * when it has settled, and writes scheduled meanwhile wait for it (they gather into it).
 *
 * It is the node's only way into the journal: a session's immediate commits (the pump
 * after a submission, a tool's start, creation, hydration) ask for an urgent tick
 * (`schedule(source, true)`: the next turn of the event loop instead of the group-commit
 * delay) and await it; one-off writes of no session (a recovery record) go in with
 * `submit`.
 */
import { JournalError } from '../errors.js';
import type { BatchWrite, JournalWriter, WriteOutcome } from './journal.js';

/** A session's side of the shared writer (the Recorder). */
export interface WriteSource {
  /** Everything pending, as one write; null when there is nothing to write. */
  take(): BatchWrite | null;
  /** The outcome of the write `take` gave, once the commit is over. */
  settle(outcome: WriteOutcome): void;
}

export interface SharedWriterOptions {
  /** How long writes gather after the first one is scheduled (`journal.group_commit_ms`). */
  tickMs: number;
  /** Event JSON one tick commits at most (default 4 MiB). */
  maxBytes?: number;
  /** A source's `settle` threw (a bug): the other sources are still settled. */
  onError?: (err: unknown) => void;
  /** Told of every tick's commit once it is over (telemetry's commit histograms). */
  onCommitted?: (tick: CommitTick) => void;
}

/** One tick's commit, as telemetry sees it. */
export interface CommitTick {
  /** Sessions' writes committed together. */
  sessions: number;
  /** Seconds from handing the writes to the journal to its answer. */
  seconds: number;
  /** Writes the journal refused. */
  failed: number;
}

/** What /healthz shows of the writer. */
export interface WriterStats {
  ticks: number;
  writes: number;
  /** Sessions' writes in the largest tick. */
  max_writes_per_tick: number;
  /** Main-thread time of the last and the longest tick (commit + settling), in ms. */
  last_tick_ms: number;
  max_tick_ms: number;
}

const DEFAULT_MAX_BYTES = 4 * 1024 * 1024;

export class SharedWriter {
  /** Sources waiting for the next tick, in the order they asked. */
  private readonly waiting = new Set<WriteSource>();
  private timer: NodeJS.Timeout | null = null;
  private immediate: NodeJS.Immediate | null = null;
  /** The commit in flight (its settling included), if any: the next tick waits for it. */
  private inFlight: Promise<void> | null = null;
  /** A waiting source asked for its commit on the next turn of the event loop. */
  private urgent = false;
  private closed = false;
  private readonly stats: WriterStats = { ticks: 0, writes: 0, max_writes_per_tick: 0, last_tick_ms: 0, max_tick_ms: 0 };

  constructor(
    private readonly store: JournalWriter,
    private readonly options: SharedWriterOptions,
  ) {}

  /**
   * Commit this source's pending write in the next tick; `urgent`: that tick runs on the
   * next turn of the event loop (setImmediate) rather than after the group-commit delay.
   */
  schedule(source: WriteSource, urgent = false): void {
    this.waiting.add(source);
    if (urgent) this.urgent = true;
    this.arm();
  }

  /** One write of no session's recorder (a recovery record), in the next urgent tick. */
  submit(write: BatchWrite): Promise<WriteOutcome> {
    return new Promise((resolve) => {
      let taken = false;
      this.schedule(
        {
          take: () => (taken ? null : ((taken = true), write)),
          settle: resolve,
        },
        true,
      );
    });
  }

  /** Forget a waiting source (it committed by itself, or it stopped). */
  cancel(source: WriteSource): void {
    this.waiting.delete(source);
    // Nothing left for the armed tick to take: drop its timer instead of letting it fire empty.
    if (this.waiting.size === 0 && !this.inFlight) {
      this.disarm();
      this.urgent = false;
    }
  }

  get waitingCount(): number {
    return this.waiting.size;
  }

  statistics(): WriterStats {
    return { ...this.stats };
  }

  /**
   * Run the ticks now for whatever waits, while the storage answers synchronously (SQLite):
   * start-up, where recovery's writes of every session go into one tick before the server
   * listens. A storage call that answers a Promise stays in flight (its sessions await it).
   */
  tickNow(): void {
    while (this.waiting.size > 0 && !this.inFlight) this.tick();
  }

  /** Commit whatever waits or is in flight, tick after tick, until nothing does (closing). */
  async drain(): Promise<void> {
    for (;;) {
      if (this.inFlight) await this.inFlight;
      else if (this.waiting.size > 0) this.tick();
      else return;
    }
  }

  /** Commit what waits and stop ticking; later writes are refused (`the journal is closed`). */
  async close(): Promise<void> {
    await this.drain();
    this.closed = true;
    this.disarm();
  }

  private arm(): void {
    if (this.inFlight) return;
    if (this.closed) {
      // Closed: nothing more reaches the journal; whoever waits hears so at once.
      queueMicrotask(() => this.refuseWaiting());
      return;
    }
    if (this.urgent && this.timer) {
      clearTimeout(this.timer);
      this.timer = null;
    }
    if (this.timer || this.immediate) return;
    if (this.urgent) this.immediate = setImmediate(() => this.tick());
    else this.timer = setTimeout(() => this.tick(), this.options.tickMs);
  }

  private refuseWaiting(): void {
    const sources = [...this.waiting];
    this.waiting.clear();
    const error = new JournalError('the journal is closed');
    for (const source of sources) {
      try {
        if (source.take()) source.settle({ ok: false, error });
      } catch (err) {
        this.options.onError?.(err);
      }
    }
  }

  private disarm(): void {
    if (this.timer) clearTimeout(this.timer);
    if (this.immediate) clearImmediate(this.immediate);
    this.timer = null;
    this.immediate = null;
  }

  /** One tick: take the waiting writes (up to maxBytes), commit them together, settle each. */
  private tick(): void {
    this.disarm();
    this.urgent = false;
    const started = performance.now();
    const maxBytes = this.options.maxBytes ?? DEFAULT_MAX_BYTES;
    const sources: WriteSource[] = [];
    const writes: BatchWrite[] = [];
    let bytes = 0;
    for (const source of this.waiting) {
      if (bytes >= maxBytes) break;
      this.waiting.delete(source);
      let write: BatchWrite | null;
      try {
        write = source.take();
      } catch (err) {
        // A bug in one source must not keep the others' writes from committing.
        this.options.onError?.(err);
        continue;
      }
      if (!write) continue;
      sources.push(source);
      writes.push(write);
      for (const b of write.batches) bytes += b.length;
    }
    const cut = bytes >= maxBytes;
    if (writes.length === 0) return this.next(cut);
    const committing = performance.now();
    const outcomes = this.store.commitMany(writes);
    if (Array.isArray(outcomes)) {
      this.committed(outcomes, committing);
      this.settleAll(sources, outcomes, started);
      return this.next(cut);
    }
    this.inFlight = outcomes
      .then(
        (done) => {
          this.committed(done, committing);
          this.settleAll(sources, done, started);
        },
        (err: unknown) => {
          const failed = sources.map((): WriteOutcome => ({ ok: false, error: asJournalError(err) }));
          this.committed(failed, committing);
          this.settleAll(sources, failed, started);
        },
      )
      .finally(() => {
        this.inFlight = null;
        this.next(cut);
      });
  }

  /** More waiting: a tick cut at maxBytes continues at once, a fresh one after tickMs. */
  private next(cut: boolean): void {
    if (this.waiting.size === 0 || this.inFlight) return;
    if (cut) this.urgent = true;
    this.arm();
  }

  private committed(outcomes: readonly WriteOutcome[], since: number): void {
    const report = this.options.onCommitted;
    if (!report) return;
    let failed = 0;
    for (const o of outcomes) if (!o.ok) failed++;
    try {
      report({ sessions: outcomes.length, seconds: (performance.now() - since) / 1000, failed });
    } catch (err) {
      this.options.onError?.(err);
    }
  }

  private settleAll(sources: WriteSource[], outcomes: WriteOutcome[], started: number): void {
    for (let i = 0; i < sources.length; i++) {
      try {
        sources[i]!.settle(outcomes[i] ?? { ok: false, error: asJournalError(new Error('the journal answered no outcome')) });
      } catch (err) {
        this.options.onError?.(err);
      }
    }
    const ms = performance.now() - started;
    const s = this.stats;
    s.ticks++;
    s.writes += sources.length;
    s.max_writes_per_tick = Math.max(s.max_writes_per_tick, sources.length);
    s.last_tick_ms = ms;
    s.max_tick_ms = Math.max(s.max_tick_ms, ms);
  }
}

function asJournalError(err: unknown): JournalError {
  return err instanceof JournalError ? err : new JournalError(`journal write failed: ${(err as Error)?.message ?? String(err)}`, err);
}
