/**
 * What the model sees of a transcript (docs/context.md): the append-only transcript holds
 * compaction markers; the model's view replaces everything a marker summarized by one
 * summary item. Also the token estimate (UTF-8 bytes / 4), the compaction plan (which
 * items are summarized, which are kept verbatim — a tool call never separated from its
 * result), the summarization request and the 64 KiB cut of tool output sent to the model.
 * Pure functions over plain data.
 */
import { LIMITS, utf8Bytes, type CompactionReason } from '../../protocol/index.js';
import { SUMMARIZE_MARKER, type ContextItem, type ToolSpec } from '../model/types.js';

/**
 * A compaction marker in the transcript: every item before `keep_from` (earlier markers
 * included) is replaced in the model's view by `summary`; items from `keep_from` on stay.
 */
export interface CompactionItem {
  role: 'compaction';
  summary: string;
  keep_from: number;
}

/** One journaled transcript item: model context or a compaction marker. */
export type TranscriptItem = ContextItem | CompactionItem;

/** One item of the model's view and its index in the transcript. */
export interface ViewItem {
  index: number;
  item: ContextItem;
}

/** How the summary is put before the kept items (a runtime note, role `system`). */
export const SUMMARY_PREFIX = 'Summary of the earlier conversation (older messages were compacted to save context):\n';

/** The estimate of a text's tokens: UTF-8 bytes / 4, rounded up. */
export function estimateTokens(text: string): number {
  return Math.ceil(utf8Bytes(text) / 4);
}

/** The summary item the model sees for a marker. */
export function summaryItem(summary: string): ContextItem {
  return { role: 'system', text: SUMMARY_PREFIX + summary };
}

/** Estimated tokens of one item as the model is sent it. */
export function itemTokens(item: TranscriptItem): number {
  return estimateTokens(JSON.stringify(item.role === 'compaction' ? summaryItem(item.summary) : item));
}

/** Estimated tokens of what every call sends besides the transcript: system prompt and tool specs. */
export function baseTokens(system: string, tools: readonly ToolSpec[]): number {
  return estimateTokens(system) + (tools.length > 0 ? estimateTokens(JSON.stringify(tools)) : 0);
}

/** The index of the last compaction marker, or -1. */
export function lastMarker(items: readonly TranscriptItem[]): number {
  for (let i = items.length - 1; i >= 0; i--) {
    if (items[i]!.role === 'compaction') return i;
  }
  return -1;
}

/** The model's view of a transcript: the last marker's summary, then what it kept, then what came after. */
export function modelView(items: readonly TranscriptItem[]): ViewItem[] {
  const marker = lastMarker(items);
  const view: ViewItem[] = [];
  let from = 0;
  if (marker >= 0) {
    const m = items[marker] as CompactionItem;
    view.push({ index: marker, item: summaryItem(m.summary) });
    for (let i = m.keep_from; i < marker; i++) {
      const item = items[i]!;
      if (item.role !== 'compaction') view.push({ index: i, item });
    }
    from = marker + 1;
  }
  for (let i = from; i < items.length; i++) view.push({ index: i, item: items[i] as ContextItem });
  return view;
}

/**
 * The items of the model's view, as a model call is sent them (a transcript never compacted:
 * all of it). `marker` is the index of the last compaction marker (-1: none) when the caller
 * keeps track of it.
 */
export function modelContext(items: readonly TranscriptItem[], marker = lastMarker(items)): ContextItem[] {
  if (marker < 0) return items.slice() as ContextItem[];
  return modelView(items).map((v) => v.item);
}

/** The estimate of the whole next call from a view (after a compaction, until the next report). */
export function viewTokens(view: readonly ViewItem[], base: number): number {
  let n = base;
  for (const v of view) n += itemTokens(v.item);
  return n;
}

/** What one compaction will summarize and keep. */
export interface CompactionPlan {
  /** The items to summarize, in order (the model's view of the older part). */
  older: ContextItem[];
  /** Transcript index where the kept (verbatim) part starts; the marker's own index when nothing is kept. */
  keep_from: number;
  items_before: number;
  /** The summary item plus the kept items. */
  items_after: number;
  /** Estimated tokens of the kept items. */
  kept_tokens: number;
}

/**
 * Split the view: keep the longest suffix of at most `keepTokens` verbatim (none for a
 * manual compaction), moved forward past tool results so a call and its results are
 * summarized together. Null when there is nothing older to summarize.
 */
export function planCompaction(
  items: readonly TranscriptItem[],
  reason: CompactionReason,
  keepTokens: number,
): CompactionPlan | null {
  const view = modelView(items);
  let split = view.length;
  let kept = 0;
  if (reason !== 'manual') {
    while (split > 0) {
      const t = itemTokens(view[split - 1]!.item);
      if (kept + t > keepTokens) break;
      kept += t;
      split--;
    }
    while (split < view.length && view[split]!.item.role === 'tool') {
      kept -= itemTokens(view[split]!.item);
      split++;
    }
  }
  if (split === 0 || view.length === 0) return null;
  // A lone summary and nothing new: compacting again would only summarize the summary.
  if (split === 1 && items[view[0]!.index]!.role === 'compaction' && reason !== 'manual') return null;
  return {
    older: view.slice(0, split).map((v) => v.item),
    keep_from: split < view.length ? view[split]!.index : items.length,
    items_before: view.length,
    items_after: 1 + (view.length - split),
    kept_tokens: Math.max(0, kept),
  };
}

/** The verbatim-kept budget: `keep_recent_tokens`, never more than a quarter of the window. */
export function keepBudget(keepRecentTokens: number, window: number | null): number {
  return window === null ? keepRecentTokens : Math.min(keepRecentTokens, Math.floor(window / 4));
}

/** The instruction that ends a summarization request; the scripted model recognizes its marker. */
export const SUMMARIZE_INSTRUCTION =
  `${SUMMARIZE_MARKER} Summarize the conversation above for your own later use: the user's goals and requests, ` +
  'decisions made, files and commands involved with their important results, and what remains to be done. ' +
  'Answer with the summary only.';

/** The context of a summarization call: the older part, then the instruction as a user message. */
export function summarizationContext(older: readonly ContextItem[]): ContextItem[] {
  return [...older, { role: 'user', text: SUMMARIZE_INSTRUCTION }];
}

/**
 * A tool's output as the model is sent it: at most 64 KiB of UTF-8, the head and the
 * tail kept and a marker in the middle saying how much was cut.
 */
export function cutToolOutput(output: string, maxBytes: number = LIMITS.toolOutputToModelMaxBytes): string {
  const total = utf8Bytes(output);
  if (total <= maxBytes) return output;
  const buf = Buffer.from(output, 'utf8');
  const markerFor = (cut: number) => `\n[… ${cut} bytes of output cut here: ${total} bytes in all …]\n`;
  const room = maxBytes - utf8Bytes(markerFor(total));
  const headBytes = Math.floor(room / 2);
  const tailBytes = room - headBytes;
  // Decode drops a partial character at either cut as U+FFFD; trim those replacement characters.
  const head = buf.subarray(0, headBytes).toString('utf8').replace(/\uFFFD+$/, '');
  const tail = buf.subarray(total - tailBytes).toString('utf8').replace(/^\uFFFD+/, '');
  const cut = total - utf8Bytes(head) - utf8Bytes(tail);
  return head + markerFor(cut) + tail;
}
