/** Serialization helpers for server → client frames. */
import type WebSocket from 'ws';
import type { ErrorCode, ServerFrame } from '../../protocol/index.js';
import type { CommittedBatch } from '../session/api.js';

export interface ErrorContext {
  req_id?: string | undefined;
  submission_id?: string | undefined;
}

/** An `error` frame; absent correlation ids are left out. */
export function errorFrame(code: ErrorCode, message: string, ctx: ErrorContext = {}): ServerFrame {
  return {
    type: 'error',
    code,
    message,
    ...(ctx.req_id !== undefined && { req_id: ctx.req_id }),
    ...(ctx.submission_id !== undefined && { submission_id: ctx.submission_id }),
  };
}

/**
 * A `history` frame built from the batches' pre-serialized frames (a batch frame and a
 * history entry have the same shape), so batches are not serialized again.
 */
export function historyFrameText(
  reqId: string,
  sessionId: string,
  batches: readonly CommittedBatch[],
  nextBeforeSequence: number | null,
): string {
  return (
    `{"type":"history","req_id":${JSON.stringify(reqId)},"session_id":${JSON.stringify(sessionId)},` +
    `"batches":[${batches.map((b) => b.frame).join(',')}],` +
    `"next_before_sequence":${nextBeforeSequence === null ? 'null' : String(nextBeforeSequence)}}`
  );
}

/** The text of a received WebSocket message. */
export function rawToString(data: WebSocket.RawData): string {
  if (Buffer.isBuffer(data)) return data.toString('utf8');
  if (Array.isArray(data)) return Buffer.concat(data).toString('utf8');
  return Buffer.from(data).toString('utf8');
}
