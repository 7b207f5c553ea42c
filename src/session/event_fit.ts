/**
 * Fitting events into frames (docs/configuration.md): no server frame exceeds 4 MiB, so one event
 * envelope must fit, with room for the batch frame around it. An event whose fields would
 * not fit is cut — its largest fields first — and carries `truncated: true` on its
 * envelope. Serialization of every event goes through here, once.
 */
import { encodeEvent, type EventMsg } from '../../protocol/index.js';
import { LIMITS } from '../../protocol/limits.js';

/** Room kept in a frame for the batch header around the events array. */
const FRAME_HEADER_RESERVE = 1024;
/** The most UTF-8 bytes one batch's events array may take. */
export const MAX_BATCH_EVENTS_BYTES = LIMITS.frameMaxBytes - FRAME_HEADER_RESERVE;
/** The most UTF-8 bytes one event envelope may take (it must fit a batch alone). */
export const MAX_EVENT_BYTES = MAX_BATCH_EVENTS_BYTES - 2;

/** Serialize one event envelope (the journal's and the wire's form of an event), cut to fit. */
export function eventEntry(msg: EventMsg, submissionId: string | null, turnId: string | null, ts: number): string {
  const entry = encodeEvent(msg, submissionId, turnId, ts);
  // A JSON string of n characters is at most 3n UTF-8 bytes: most events skip the count.
  if (entry.length * 3 <= MAX_EVENT_BYTES || Buffer.byteLength(entry) <= MAX_EVENT_BYTES) return entry;
  return truncatedEntry(msg, submissionId, turnId, ts);
}

/** Cut the largest fields of `msg` until the envelope fits; marks it `truncated: true`. */
function truncatedEntry(msg: EventMsg, submissionId: string | null, turnId: string | null, ts: number): string {
  const fields: Record<string, unknown> = { ...msg };
  for (let round = 0; round < 64; round++) {
    const entry = JSON.stringify({ submission_id: submissionId, turn_id: turnId, ts, truncated: true, msg: fields });
    const bytes = Buffer.byteLength(entry);
    if (bytes <= MAX_EVENT_BYTES) return entry;
    let largest: string | null = null;
    let largestBytes = -1;
    for (const [key, value] of Object.entries(fields)) {
      if (key === 'type') continue;
      const size = typeof value === 'string' ? Buffer.byteLength(value) : Buffer.byteLength(JSON.stringify(value) ?? '');
      if (size > largestBytes) {
        largest = key;
        largestBytes = size;
      }
    }
    if (largest === null) break;
    const value = fields[largest];
    // Shrink by the excess (plus a margin for JSON escapes), never below nothing.
    const keep = Math.max(0, largestBytes - (bytes - MAX_EVENT_BYTES) - 256 * (round + 1));
    fields[largest] = typeof value === 'string' ? cutUtf8(value, Math.floor(keep * 0.9)) : `[${largestBytes} bytes of JSON cut to fit a frame]`;
  }
  throw new Error(`event ${msg.type} cannot be cut to fit a frame`);
}

/** The longest prefix of `text` of at most `maxBytes` UTF-8 bytes (never half a character). */
function cutUtf8(text: string, maxBytes: number): string {
  if (maxBytes <= 0) return '';
  if (text.length * 3 <= maxBytes) return text;
  const cut = Buffer.from(text, 'utf8').subarray(0, maxBytes).toString('utf8');
  return cut.endsWith('\uFFFD') && !text.startsWith(cut) ? cut.slice(0, -1) : cut;
}
