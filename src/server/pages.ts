/**
 * Pages of `list_sessions` and `history` answers bounded by encoded bytes: no server frame
 * exceeds the frame limit (docs/configuration.md). A page stops before the entry that would pass
 * the limit; its cursor (`next_before` / `next_before_sequence`) lets the client go on
 * from there. The frame text is assembled from the entries' JSON, so each is encoded once.
 */
import { LIMITS, type SessionDescriptor } from '../../protocol/index.js';
import type { CommittedBatch, SessionHostApi } from '../session/api.js';

const utf8 = (s: string): number => Buffer.byteLength(s, 'utf8');

export interface SessionsPage {
  /** The `sessions` frame. */
  text: string;
  included: number;
  /** Sessions whose descriptor alone exceeds a frame (left out, not answered over the limit). */
  left_out: string[];
}

/**
 * The `sessions` frame for a page of descriptors (newest first) as the host returned it,
 * cut to `maxBytes`. When cut, `next_before` is the last session of this page (the client
 * lists on from there); otherwise it is the host's cursor.
 */
export function sessionsPage(
  reqId: string,
  sessions: readonly SessionDescriptor[],
  hostNextBefore: string | null,
  maxBytes: number = LIMITS.frameMaxBytes,
): SessionsPage {
  const head = `{"type":"sessions","req_id":${JSON.stringify(reqId)},"sessions":[`;
  const tail = (next: string | null): string => `],"next_before":${next === null ? 'null' : JSON.stringify(next)}}`;
  // Room for the longest cursor any cut could need (an identifier of the maximum length).
  const tailMax = utf8(tail('x'.repeat(LIMITS.identifierMaxBytes)));
  const parts: string[] = [];
  const leftOut: string[] = [];
  let bytes = utf8(head) + tailMax;
  let last: string | undefined; // the last session of this page, included or left out
  for (const d of sessions) {
    const json = JSON.stringify(d);
    const size = utf8(json);
    if (utf8(head) + tailMax + size > maxBytes) {
      leftOut.push(d.session_id);
      last = d.session_id;
      continue;
    }
    const sep = parts.length > 0 ? 1 : 0;
    if (bytes + sep + size > maxBytes) {
      return { text: head + parts.join(',') + tail(last!), included: parts.length, left_out: leftOut };
    }
    parts.push(json);
    bytes += sep + size;
    last = d.session_id;
  }
  return { text: head + parts.join(',') + tail(hostNextBefore), included: parts.length, left_out: leftOut };
}

export type HistoryPage =
  | { ok: true; text: string; included: number }
  /** The newest batch alone does not fit in a history frame. */
  | { ok: false; sequence: number };

/**
 * The `history` frame for `batches` (ascending, as read before the client's cursor): the
 * newest batches that fit in `maxBytes`. `next_before_sequence` is the oldest sequence
 * included, or null when that is batch 1 (nothing older exists). Batch frames and history
 * entries have the same shape, so the batches' pre-serialized frames are used as they are.
 */
export function historyPage(
  reqId: string,
  sessionId: string,
  batches: readonly CommittedBatch[],
  maxBytes: number = LIMITS.frameMaxBytes,
): HistoryPage {
  const head = `{"type":"history","req_id":${JSON.stringify(reqId)},"session_id":${JSON.stringify(sessionId)},"batches":[`;
  const tail = (oldest: number | undefined): string =>
    `],"next_before_sequence":${oldest !== undefined && oldest > 1 ? String(oldest) : 'null'}}`;
  // The longest tail any cut could need (a sequence number of up to 16 digits).
  const tailMax = utf8(tail(Number.MAX_SAFE_INTEGER));
  let bytes = utf8(head) + tailMax;
  let start = batches.length;
  while (start > 0) {
    const size = utf8(batches[start - 1]!.frame) + (start < batches.length ? 1 : 0);
    if (bytes + size > maxBytes) break;
    bytes += size;
    start--;
  }
  if (start === batches.length && batches.length > 0) return { ok: false, sequence: batches[batches.length - 1]!.sequence };
  const kept = batches.slice(start);
  return {
    ok: true,
    text: head + kept.map((b) => b.frame).join(',') + tail(kept[0]?.sequence),
    included: kept.length,
  };
}

/** Batches read from the journal at first, and at most at once, while filling a history page. */
const HISTORY_READ_FIRST = 16;
const HISTORY_READ_MAX = 64;

/**
 * The newest batches before `before` (at most `limit`), read from the journal newest
 * first in chunks sized by the batches seen so far, and no further than the first batch
 * past `maxBytes`: a history request never loads more than about one frame of batches
 * (plus one chunk), whatever its `limit`. Ascending, like `readBefore`.
 */
export async function readHistory(
  host: Pick<SessionHostApi, 'readBefore'>,
  sessionId: string,
  before: number,
  limit: number,
  maxBytes: number = LIMITS.frameMaxBytes,
): Promise<CommittedBatch[]> {
  const chunks: CommittedBatch[][] = [];
  let count = 0;
  let bytes = 0;
  let cursor = before;
  while (count < limit && bytes <= maxBytes) {
    const perBatch = count === 0 ? 0 : bytes / count;
    const room = perBatch === 0 ? HISTORY_READ_FIRST : Math.floor((maxBytes - bytes) / perBatch) + 1;
    const want = Math.max(1, Math.min(limit - count, HISTORY_READ_MAX, room));
    const chunk = await host.readBefore(sessionId, cursor, want);
    if (chunk.length === 0) break;
    chunks.unshift(chunk);
    count += chunk.length;
    for (const b of chunk) bytes += utf8(b.frame);
    cursor = chunk[0]!.sequence;
    if (chunk.length < want) break;
  }
  return chunks.flat();
}
