/**
 * The folder: a transcript's items, fold state and session info as working copies, and
 * the edits event handlers make to them (fold.ts). It mutates the copies in place (an
 * item is copied the first time it changes), so the states it started from stay
 * untouched; transcript.ts wraps it immutably.
 */
import type { Item, ItemKind, NoticeTone, ToolItem, TurnEndItem } from './items.js';
import type { SessionInfo } from './session-info.js';

/** What the fold tracks between batches to place the next events. */
export interface Fold {
  /** Index of the agent item receiving deltas, if any. */
  openAgent: number | null;
  /** call_id → item index. */
  tools: Record<string, number>;
  /** approval_id → call_id. */
  approvals: Record<string, string>;
}

export const emptyFold = (): Fold => ({ openAgent: null, tools: {}, approvals: {} });

/** A turn's totals, known when it completes. */
export type TurnStats = Pick<TurnEndItem, 'durationMs' | 'modelCalls' | 'toolCalls' | 'tokens'>;

const NO_STATS: TurnStats = { durationMs: null, modelCalls: null, toolCalls: null, tokens: null };

/** Mutable folding over copies of a transcript's items, fold and info. */
export class Folder {
  items: Item[];
  fold: Fold;
  info: SessionInfo;
  /** Item indexes already copied in this fold (safe to mutate). */
  private readonly owned = new Set<number>();

  constructor(items: Item[], fold: Fold, info: SessionInfo) {
    this.items = items.slice();
    this.fold = { openAgent: fold.openAgent, tools: { ...fold.tools }, approvals: { ...fold.approvals } };
    this.info = { ...info };
  }

  /** Append an item; returns its index. */
  add(item: Item): number {
    this.items.push(item);
    const idx = this.items.length - 1;
    this.owned.add(idx);
    return idx;
  }

  /** A mutable copy of the item at idx. */
  edit<K extends ItemKind>(idx: number): Extract<Item, { kind: K }> {
    if (!this.owned.has(idx)) {
      const it = this.items[idx]!;
      this.items[idx] = it.kind === 'tool' ? { ...it, output: it.output.map((c) => ({ ...c })) } : { ...it };
      this.owned.add(idx);
    }
    return this.items[idx] as Extract<Item, { kind: K }>;
  }

  /** The streaming agent reply (and thinking), if any, is complete. */
  closeAgent(): void {
    this.closeReasoning();
    if (this.fold.openAgent === null) return;
    const it = this.edit<'agent'>(this.fold.openAgent);
    it.streaming = false;
    this.fold.openAgent = null;
  }

  /** The last item, when it is thinking still streaming. */
  openReasoning(): number | null {
    const idx = this.items.length - 1;
    const it = this.items[idx];
    return it?.kind === 'reasoning' && it.streaming ? idx : null;
  }

  closeReasoning(): void {
    const idx = this.openReasoning();
    if (idx !== null) this.edit<'reasoning'>(idx).streaming = false;
  }

  notice(seq: number, key: string, tone: NoticeTone, text: string, detail?: string): void {
    const it: Item = { kind: 'notice', key, seq, tone, text };
    if (detail !== undefined) it.detail = detail;
    this.add(it);
  }

  /** The tool item of `callId`, created on its first event (mutable). */
  tool(seq: number, key: string, callId: string, tool: string, args: unknown): ToolItem {
    const idx = this.fold.tools[callId];
    if (idx !== undefined) return this.edit<'tool'>(idx);
    const item: ToolItem = {
      kind: 'tool',
      key,
      seq,
      callId,
      tool,
      args,
      output: [],
      truncated: 0,
      status: 'running',
      exitCode: null,
      durationMs: null,
      approval: null,
      cwd: null,
    };
    this.fold.tools[callId] = this.add(item);
    return item;
  }

  private endTurn(turnId: string | null): void {
    this.closeAgent();
    if (turnId === null || this.info.activeTurnId === turnId || this.info.activeTurnId === null) {
      this.info.activeTurnId = null;
      this.info.turnStartedAt = null;
    }
    if (this.info.pendingApproval) {
      // A turn's end cancels its pending approval.
      const callId = this.info.pendingApproval.call_id;
      const idx = this.fold.tools[callId];
      if (idx !== undefined) {
        const it = this.edit<'tool'>(idx);
        if (it.approval === 'pending') it.approval = null;
        if (it.status === 'awaiting_approval') it.status = 'interrupted';
      }
      this.info.pendingApproval = null;
    }
    // Tool calls still marked running belong to the ended turn.
    for (const idx of Object.values(this.fold.tools)) {
      const it = this.items[idx] as ToolItem;
      if (it.status === 'running' || it.status === 'awaiting_approval') this.edit<'tool'>(idx).status = 'interrupted';
    }
    this.fold.tools = {};
  }

  /** End the turn and add its closing item. */
  finishTurn(
    turnId: string | null,
    seq: number,
    key: string,
    outcome: TurnEndItem['outcome'],
    reason: string | null,
    stats: TurnStats = NO_STATS,
  ): void {
    this.endTurn(turnId);
    this.add({ kind: 'turn_end', key, seq, outcome, reason, ...stats });
  }
}
