/**
 * Wire encoders: the JSON text of events and of the server frames that are built from
 * already-serialized parts (batch, history) or on the hot path (deltas). Every encoder's
 * output equals `JSON.stringify` of the schema-valid object it stands for
 * (test/protocol-encode.test.ts), so a batch serialized once is sent, journaled and
 * replayed as the same bytes.
 */
import type { EventMsg, ExecOutputDeltaMsg } from './events.js';
import type { ErrorCode, ErrorFrame } from './frames.js';
import { LIMITS } from './limits.js';

/** The correlation ids of an event envelope. */
export interface EventIds {
  submission_id: string | null;
  turn_id: string | null;
}

/** One event envelope `{submission_id, turn_id, ts, msg}` (the journal's and the wire's form of an event). */
export function encodeEvent(msg: EventMsg, submissionId: string | null, turnId: string | null, ts: number): string {
  return JSON.stringify({ submission_id: submissionId, turn_id: turnId, ts, msg });
}

/** A JSON array of events from their encoded envelopes (a batch's `events`). */
export function encodeEventList(events: readonly string[]): string {
  return `[${events.join(',')}]`;
}

/** A `batch` frame around its encoded `events` array; every client gets these exact bytes. */
export function encodeBatchFrame(sessionId: string, sequence: number, committedAt: number, eventsJson: string): string {
  return `{"type":"batch","session_id":${JSON.stringify(sessionId)},"sequence":${sequence},"committed_at":${committedAt},"events":${eventsJson}}`;
}

/**
 * A `history` frame from the batches' encoded frames (a batch frame and a history entry
 * have the same shape), so batches are not serialized again.
 */
export function encodeHistoryFrame(
  reqId: string,
  sessionId: string,
  batchFrames: readonly string[],
  nextBeforeSequence: number | null,
): string {
  return (
    `{"type":"history","req_id":${JSON.stringify(reqId)},"session_id":${JSON.stringify(sessionId)},` +
    `"batches":[${batchFrames.join(',')}],` +
    `"next_before_sequence":${nextBeforeSequence === null ? 'null' : String(nextBeforeSequence)}}`
  );
}

/** Correlation ids an `error` frame echoes, when they could be read from the frame that caused it. */
export interface ErrorContext {
  req_id?: string | undefined;
  submission_id?: string | undefined;
}

const CUT_MARKER = '… (cut)';

/**
 * `message`, cut at a character boundary to at most `LIMITS.errorMessageMaxBytes` UTF-8
 * bytes: a message quoting client input (e.g. every unknown field of a frame) stays small
 * whatever the client sent.
 */
export function boundedMessage(message: string): string {
  if (message.length * 3 <= LIMITS.errorMessageMaxBytes || Buffer.byteLength(message, 'utf8') <= LIMITS.errorMessageMaxBytes) return message;
  const room = LIMITS.errorMessageMaxBytes - Buffer.byteLength(CUT_MARKER, 'utf8');
  let cut = Buffer.from(message.slice(0, LIMITS.errorMessageMaxBytes), 'utf8').subarray(0, room).toString('utf8');
  // A multi-byte character split at the cut decodes to U+FFFD: drop it.
  if (cut.endsWith('\uFFFD')) cut = cut.slice(0, -1);
  return cut + CUT_MARKER;
}

/** An `error` frame; absent correlation ids are left out; the message is bounded. */
export function errorFrame(code: ErrorCode, message: string, ctx: ErrorContext = {}): ErrorFrame {
  return {
    type: 'error',
    code,
    message: boundedMessage(message),
    ...(ctx.req_id !== undefined && { req_id: ctx.req_id }),
    ...(ctx.submission_id !== undefined && { submission_id: ctx.submission_id }),
  };
}

/** The text every delta envelope of one kind starts with, up to the `msg` fields. */
function deltaHead(type: 'agent_message_delta' | 'exec_output_delta', ids: EventIds, ts: number): string {
  return `{"submission_id":${JSON.stringify(ids.submission_id)},"turn_id":${JSON.stringify(ids.turn_id)},"ts":${ts},"msg":{"type":"${type}",`;
}

/**
 * The hot path: appends one `agent_message_delta` envelope per delta to `out`, built
 * from a template — byte-identical to `encodeEvent`, without the intermediate objects.
 */
export function appendMessageDeltas(out: string[], ids: EventIds, ts: number, deltas: readonly string[]): void {
  const head = deltaHead('agent_message_delta', ids, ts);
  for (const delta of deltas) out.push(`${head}"delta":${JSON.stringify(delta)}}}`);
}

/** Appends one `exec_output_delta` envelope per chunk of one tool call (see appendMessageDeltas). */
export function appendOutputDeltas(
  out: string[],
  ids: EventIds,
  ts: number,
  callId: string,
  chunks: ReadonlyArray<Pick<ExecOutputDeltaMsg, 'stream' | 'chunk'>>,
): void {
  const head = `${deltaHead('exec_output_delta', ids, ts)}"call_id":${JSON.stringify(callId)},`;
  for (const c of chunks) out.push(`${head}"stream":"${c.stream}","chunk":${JSON.stringify(c.chunk)}}}`);
}
