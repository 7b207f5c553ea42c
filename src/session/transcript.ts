/**
 * The Transcript: the model context of a session, append-only (compaction appends a
 * marker; the model's view is built by context.ts). Items up to
 * `committedLength` are in the journal; items after it belong to the next batch and are
 * dropped again if that batch fails to commit. Loaded lazily from the journal on first use:
 * at once from a journal that answers in-process (SQLite); from one that answers promises
 * (PostgreSQL) the session awaits `ready()` before its actor may need the items.
 */
import type { ContextItem } from '../model/types.js';
import { lastMarker, modelContext, type TranscriptItem } from './context.js';

export class Transcript {
  private items: TranscriptItem[] | null = null;
  /** Index of the last compaction marker in `items` (-1: none), kept as items come and go. */
  private marker = -1;
  /** The JSON of the items after `committed` (their journal rows), in order. */
  private pending: string[] = [];

  constructor(
    /** Items already in the journal. */
    private committed: number,
    private readonly load: () => TranscriptItem[] | Promise<TranscriptItem[]>,
  ) {}

  /** Null when the items are loaded (or load at once); else the promise of their loading. */
  ready(): Promise<void> | null {
    if (this.items) return null;
    const loaded = this.load();
    if (!(loaded instanceof Promise)) {
      this.loaded(loaded);
      return null;
    }
    return loaded.then((items) => {
      if (!this.items) this.loaded(items);
    });
  }

  private loaded(items: TranscriptItem[]): void {
    if (items.length !== this.committed) {
      throw new Error(`transcript has ${items.length} items, checkpoint says ${this.committed}`);
    }
    this.items = items;
    this.marker = lastMarker(items);
  }

  get committedLength(): number {
    return this.committed;
  }

  all(): readonly TranscriptItem[] {
    if (!this.items) {
      const items = this.load();
      if (items instanceof Promise) throw new Error('the transcript is not loaded yet (await ready() first)');
      this.loaded(items);
    }
    return this.items!;
  }

  get length(): number {
    return this.items ? this.items.length : this.committed;
  }

  /** Append an item; `json` is its JSON when the caller has it already. */
  append(item: TranscriptItem, json: string = JSON.stringify(item)): void {
    const items = this.all() as TranscriptItem[];
    items.push(item);
    this.pending.push(json);
    if (item.role === 'compaction') this.marker = items.length - 1;
  }

  /** What a model call is sent of the transcript (its model view), without searching it for markers. */
  modelContext(): ContextItem[] {
    return modelContext(this.all(), this.marker);
  }

  /** Items not yet committed, serialized for the journal. */
  uncommitted(): string[] {
    return this.pending.slice();
  }

  markCommitted(length: number): void {
    this.pending.splice(0, length - this.committed);
    this.committed = length;
  }

  /** Drop every uncommitted item (a commit failed). */
  rollback(): void {
    if (!this.items) return;
    this.items.length = this.committed;
    this.pending = [];
    if (this.marker >= this.committed) this.marker = lastMarker(this.items);
  }
}
