/** Protocol version, limits, defaults and close codes: the single place these numbers live. */

/** Wire protocol version spoken by this build (see docs/protocol.md). */
export const PROTOCOL_VERSION = 1;

/** Default limits from docs/configuration.md and the protocol's own bounds. Byte limits count UTF-8 bytes. */
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
  /**
   * Deepest nesting of a JSON value a client may send (capability `arguments` / `input`):
   * each array or object is one level. The spec's bound for model tool arguments (§4).
   */
  jsonMaxDepth: 64,
  /** `req_id`: 1–128 characters. */
  reqIdMaxChars: 128,
  /** A session title (`create_session.config.title`, `session title`): at most 256 characters. */
  titleMaxChars: 256,
  /** `hello.client`: at most 256 characters. */
  clientNameMaxChars: 256,
  /** `hello.token`: at most 4096 characters. */
  tokenMaxChars: 4096,
  /** `create_session.config.cwd`: 1–4096 characters. */
  cwdMaxChars: 4096,
  /** `set_model.reasoning_effort`: 1–64 characters. */
  reasoningEffortMaxChars: 64,
  /** `list_sessions.limit` and `history.limit`: 1–1000. */
  pageMax: 1000,
  /** `list_sessions.limit` when the client gives none. */
  listSessionsDefault: 50,
  /** `history.limit` when the client gives none. */
  historyDefault: 100,
  /** `attach.replay_batches`: 0–10000. */
  replayBatchesMax: 10_000,
  /** An `error` frame's message carries at most this many UTF-8 bytes (cut with a marker). */
  errorMessageMaxBytes: 1024,
  /** How deep subagents nest (docs/tools.md): a root session is depth 0, its child 1, … */
  maxSubagentDepth: 2,
  // ---- context (engineer "context"): what the model sees (docs/context.md) ----
  /** A system prompt (`create_session.config.system_prompt`, config, route): at most 64 KiB of UTF-8. */
  systemPromptMaxBytes: 64 * 1024,
  /** A tool call's output as sent to the model: at most 64 KiB (head + tail, a marker between). */
  toolOutputToModelMaxBytes: 64 * 1024,
  // ---- shell allow rules and token budget (docs/tools.md) ----
  /** `create_session.config.shell_allow` / `tools.shell.allow`: at most this many rules… */
  shellAllowMaxRules: 256,
  /** …of at most this many characters each. */
  shellRuleMaxChars: 4096,
} as const;

/** Close codes of the WebSocket (protocol.md "Connecting", docs/protocol.md §2 and §6). */
export const CLOSE_CODES = {
  /** The client closed the connection normally. */
  normal: 1000,
  /** The daemon is shutting down. */
  goingAway: 1001,
  /** A text frame that is not valid UTF-8 (after an `invalid_frame` error). */
  invalidUtf8: 1007,
  /** A frame larger than `LIMITS.frameMaxBytes`. */
  tooBig: 1009,
  /** After a `protocol` error (bad handshake). */
  protocol: 4400,
  /** After an `unauthorized` error. */
  unauthorized: 4401,
} as const;

/** WebSocket close code after an `unauthorized` error (protocol.md "Connecting"). */
export const CLOSE_UNAUTHORIZED = CLOSE_CODES.unauthorized;
/** WebSocket close code after a `protocol` error (protocol.md "Connecting"). */
export const CLOSE_PROTOCOL = CLOSE_CODES.protocol;
