/**
 * The transcript reducer: committed journal batches → display items and the session's
 * live status (model, running turn, pending approval, token usage). Pure and immutable:
 * every function returns a new state. Batches are deduplicated by sequence, and batches
 * older than what is loaded (history pages) are merged in order.
 *
 * The pieces: items.ts (what is shown), session-info.ts (the live status), fold.ts
 * (events → items, with folder.ts), sequence.ts (ordered batch lists), tool-call.ts (call summaries).
 */
import type { BatchFrame, ExecApprovalRequestMsg, SessionDescriptor } from '../../protocol/index.js';
import { foldBatch } from './fold.js';
import { Folder, emptyFold, type Fold } from './folder.js';
import type { Item, ToolItem } from './items.js';
import { hasSeq, mergeSorted } from './sequence.js';
import { emptyInfo, pickLive, type SessionInfo } from './session-info.js';

export interface TranscriptState {
  items: Item[];
  /** Every batch applied, ascending by sequence. */
  batches: BatchFrame[];
  firstSeq: number | null;
  lastSeq: number | null;
  info: SessionInfo;
  fold: Fold;
  /** Bumped whenever older batches were merged in front (the view keeps its anchor). */
  prepends: number;
}

/** A transcript with nothing loaded. */
export function emptyTranscript(sessionId: string | null = null): TranscriptState {
  return {
    items: [],
    batches: [],
    firstSeq: null,
    lastSeq: null,
    info: { ...emptyInfo(), sessionId },
    fold: emptyFold(),
    prepends: 0,
  };
}

/** Take the descriptor's view of the session (from `attached` / `session_created`). */
export function withDescriptor(state: TranscriptState, d: SessionDescriptor): TranscriptState {
  const info: SessionInfo = {
    ...state.info,
    sessionId: d.session_id,
    title: d.title,
    model: d.model,
    cwd: d.cwd,
    approvalPolicy: d.approval_policy,
    activeTurnId: d.active_turn_id,
    turnStartedAt: d.active_turn_id && d.active_turn_id === state.info.activeTurnId ? state.info.turnStartedAt : null,
    pendingApproval: d.pending_approval,
    context: d.context ? { estimated: d.context.estimated_tokens, window: d.context.context_window } : state.info.context,
  };
  // A pending approval whose request is older than the loaded history still shows on its tool.
  const next = { ...state, info };
  return d.pending_approval ? withPendingMark(next, d.pending_approval) : next;
}

/**
 * Apply batches (any order, duplicates allowed). Batches newer than everything loaded
 * are folded incrementally; older ones (history pages) cause a re-fold of everything,
 * keeping the newer live status.
 */
export function applyBatches(state: TranscriptState, batches: readonly BatchFrame[]): TranscriptState {
  if (batches.length === 0) return state;
  const known = new Set<number>();
  const fresh: BatchFrame[] = [];
  const have = (seq: number) =>
    state.lastSeq !== null && seq >= (state.firstSeq ?? 0) && seq <= state.lastSeq && hasSeq(state.batches, seq);
  for (const b of batches) {
    if (known.has(b.sequence) || have(b.sequence)) continue;
    known.add(b.sequence);
    fresh.push(b);
  }
  if (fresh.length === 0) return state;
  fresh.sort((a, b) => a.sequence - b.sequence);

  if (state.lastSeq === null || fresh[0]!.sequence > state.lastSeq) {
    const f = new Folder(state.items, state.fold, state.info);
    for (const b of fresh) foldBatch(f, b);
    return {
      ...state,
      items: f.items,
      fold: f.fold,
      info: f.info,
      batches: [...state.batches, ...fresh],
      firstSeq: state.firstSeq ?? fresh[0]!.sequence,
      lastSeq: fresh[fresh.length - 1]!.sequence,
    };
  }

  // Older batches: merge and fold again from scratch.
  const all = mergeSorted(state.batches, fresh);
  const f = new Folder([], emptyFold(), { ...emptyInfo() });
  for (const b of all) foldBatch(f, b);
  const newestFresh = fresh[fresh.length - 1]!.sequence;
  // Live status comes from the newest information; only batches past lastSeq can change it.
  const info = newestFresh > (state.lastSeq ?? 0) ? f.info : { ...f.info, ...pickLive(state.info) };
  let next: TranscriptState = {
    ...state,
    items: f.items,
    fold: f.fold,
    info,
    batches: all,
    firstSeq: all[0]!.sequence,
    lastSeq: all[all.length - 1]!.sequence,
    prepends: state.prepends + (fresh[0]!.sequence < (state.firstSeq ?? Infinity) ? 1 : 0),
  };
  if (info.pendingApproval) {
    next = withPendingMark(next, info.pendingApproval);
  }
  return next;
}

/** Apply one batch. */
export function applyBatch(state: TranscriptState, batch: BatchFrame): TranscriptState {
  return applyBatches(state, [batch]);
}

/** Mark the tool call of a pending approval as waiting for it, if the call is loaded. */
function withPendingMark(state: TranscriptState, req: ExecApprovalRequestMsg): TranscriptState {
  const idx = state.fold.tools[req.call_id];
  if (idx === undefined) return state;
  const it = state.items[idx] as ToolItem;
  if (it.status === 'awaiting_approval' && it.approval === 'pending') return state;
  const items = state.items.slice();
  items[idx] = { ...it, status: 'awaiting_approval', approval: 'pending', cwd: req.cwd };
  return { ...state, items };
}
