/** Wire protocol version spoken by this build (see protocol.md). */
export const PROTOCOL_VERSION = 1;

/** Default limits from runtime.md §9. Byte limits count UTF-8 bytes. */
export const LIMITS = {
  inboxCapacity: 64,
  identifierMaxBytes: 128,
  nameMaxBytes: 256,
  messageTextMaxBytes: 1024 * 1024,
  capabilityPayloadMaxBytes: 64 * 1024,
  frameMaxBytes: 4 * 1024 * 1024,
  replayBatches: 100,
  maxModelSteps: 2042,
  maxQueuedTurns: 256,
} as const;

/** WebSocket close code after an `unauthorized` error (protocol.md "Connecting"). */
export const CLOSE_UNAUTHORIZED = 4401;
/** WebSocket close code after a `protocol` error (protocol.md "Connecting"). */
export const CLOSE_PROTOCOL = 4400;
