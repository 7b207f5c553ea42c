/**
 * The Transcript: the model context of a session, append-only (compaction appends a
 * marker; the model's view is built by context.ts). Items up to
 * `committedLength` are in the journal; items after it belong to the next batch and are
 * dropped again if that batch fails to commit. Loaded lazily from the journal on first use.
 */
import type { TranscriptItem } from './context.js';

export class Transcript {
  private items: TranscriptItem[] | null = null;

  constructor(
    /** Items already in the journal. */
    private committed: number,
    private readonly load: () => TranscriptItem[],
  ) {}

  get committedLength(): number {
    return this.committed;
  }

  all(): readonly TranscriptItem[] {
    if (!this.items) {
      this.items = this.load();
      if (this.items.length !== this.committed) {
        throw new Error(`transcript has ${this.items.length} items, checkpoint says ${this.committed}`);
      }
    }
    return this.items;
  }

  get length(): number {
    return this.items ? this.items.length : this.committed;
  }

  append(item: TranscriptItem): void {
    (this.all() as TranscriptItem[]).push(item);
  }

  /** Items not yet committed, serialized for the journal. */
  uncommitted(): string[] {
    if (!this.items || this.items.length === this.committed) return [];
    return this.items.slice(this.committed).map((i) => JSON.stringify(i));
  }

  markCommitted(length: number): void {
    this.committed = length;
  }

  /** Drop every uncommitted item (a commit failed). */
  rollback(): void {
    if (this.items) this.items.length = this.committed;
  }
}
