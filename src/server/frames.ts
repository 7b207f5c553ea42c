/** Serialization helpers for server → client frames: `error` frames of bounded size. */
import type { ErrorCode, ServerFrame } from '../../protocol/index.js';

export interface ErrorContext {
  req_id?: string | undefined;
  submission_id?: string | undefined;
}

/**
 * An error message carries at most this many UTF-8 bytes (a message quoting client input,
 * e.g. every unknown field of a frame, is cut with a marker): error frames stay small
 * whatever the client sent.
 */
export const ERROR_MESSAGE_MAX_BYTES = 1024;

const CUT_MARKER = '… (cut)';

/** `message`, cut at a character boundary to at most ERROR_MESSAGE_MAX_BYTES bytes. */
export function boundedMessage(message: string): string {
  if (Buffer.byteLength(message, 'utf8') <= ERROR_MESSAGE_MAX_BYTES) return message;
  const room = ERROR_MESSAGE_MAX_BYTES - Buffer.byteLength(CUT_MARKER, 'utf8');
  let cut = Buffer.from(message, 'utf8').subarray(0, room).toString('utf8');
  // A multi-byte character split at the cut decodes to U+FFFD: drop it.
  if (cut.endsWith('\uFFFD')) cut = cut.slice(0, -1);
  return cut + CUT_MARKER;
}

/** An `error` frame; absent correlation ids are left out; the message is bounded. */
export function errorFrame(code: ErrorCode, message: string, ctx: ErrorContext = {}): ServerFrame {
  return {
    type: 'error',
    code,
    message: boundedMessage(message),
    ...(ctx.req_id !== undefined && { req_id: ctx.req_id }),
    ...(ctx.submission_id !== undefined && { submission_id: ctx.submission_id }),
  };
}
