/**
 * The Transcript: the model context of a session, append-only. Items up to
 * `committedLength` are in the journal; items after it belong to the next batch and are
 * dropped again if that batch fails to commit. Loaded lazily from the journal on first use.
 */
import type { ContextItem } from '../model/types.js';

export class Transcript {
  private items: ContextItem[] | null = null;

  constructor(
    /** Items already in the journal. */
    private committed: number,
    private readonly load: () => ContextItem[],
  ) {}

  get committedLength(): number {
    return this.committed;
  }

  all(): readonly ContextItem[] {
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

  append(item: ContextItem): void {
    (this.all() as ContextItem[]).push(item);
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
