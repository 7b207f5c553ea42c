/** Errors raised by the protocol client. */
import type { ErrorCode } from '../../protocol/index.js';

/** The server answered a request or submission with an `error` frame. */
export class ServerError extends Error {
  constructor(
    readonly code: ErrorCode,
    message: string,
    readonly reqId?: string,
    readonly submissionId?: string,
  ) {
    super(message);
    this.name = 'ServerError';
  }
}

/**
 * The connection could not be opened, was refused, or closed before an answer came.
 * `retryable` is false when trying again cannot help (bad token, protocol mismatch).
 */
export class ConnectionError extends Error {
  constructor(
    message: string,
    readonly retryable = true,
    readonly closeCode?: number,
  ) {
    super(message);
    this.name = 'ConnectionError';
  }
}

/**
 * The server sent a frame this client cannot take (over its `maxFrameBytes`, or not a
 * valid WebSocket frame). Never retryable: after a reconnect the stream would resume at
 * the same frame, so retrying would loop.
 */
export class UnreadableFrameError extends ConnectionError {
  constructor(
    message: string,
    /** The ws error code, e.g. `WS_ERR_UNSUPPORTED_MESSAGE_LENGTH` for a frame over the limit. */
    readonly wsCode: string,
    closeCode?: number,
  ) {
    super(message, false, closeCode);
    this.name = 'UnreadableFrameError';
  }
}

/**
 * A frame this client was asked to send is over the protocol's frame limit
 * (LIMITS.frameMaxBytes): it is not sent — the daemon would close the connection, and
 * re-sending it after a reconnect would loop. Not retryable.
 */
export class FrameTooLargeError extends ConnectionError {
  constructor(
    readonly bytes: number,
    readonly limitBytes: number,
  ) {
    super(`frame too large: ${bytes} bytes, the limit is ${limitBytes}`, false);
    this.name = 'FrameTooLargeError';
  }
}

/** A short one-line description of any error, for status lines and CLI messages. */
export function describeError(err: unknown): string {
  if (err instanceof ServerError) return `${err.code}: ${err.message}`;
  if (err instanceof Error) return err.message;
  return String(err);
}
