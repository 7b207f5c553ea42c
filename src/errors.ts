/**
 * Errors as typed values. Every failure a user can cause maps to one of the protocol's
 * error codes (protocol.md "Server → client frames").
 */
import type { ErrorCode } from '../protocol/index.js';

export class AgentdError extends Error {
  constructor(
    readonly code: ErrorCode,
    message: string,
  ) {
    super(message);
    this.name = 'AgentdError';
  }
}

/** The configuration file is invalid; `message` names the bad field. */
export class ConfigError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ConfigError';
  }
}

/** A journal commit failed (disk full, read-only, I/O error). */
export class JournalError extends Error {
  constructor(
    message: string,
    override readonly cause?: unknown,
  ) {
    super(message);
    this.name = 'JournalError';
  }
}
