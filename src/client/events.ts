/** What an AgentdClient reports: its connection state, and the frames of attached sessions. */
import type { Admitted, Attached, BatchFrame, ErrorFrame, SessionDeleted } from '../../protocol/index.js';
import type { ConnectionError } from './errors.js';

export type ClientState =
  | { kind: 'idle' }
  | { kind: 'connecting' }
  /** `url`: the daemon address this connection went to (one of several, see addresses.ts). */
  | { kind: 'connected'; server: string; url?: string }
  | { kind: 'reconnecting'; attempt: number; delayMs: number; retryAt: number; error: string }
  /** For good. `failure` is the typed reason when a connection failure ended it (not `close()`). */
  | { kind: 'closed'; error?: string; failure?: ConnectionError };

export type ClientEvents = {
  state: [ClientState];
  /** Batches of attached sessions: per session in sequence order, no duplicates. */
  batch: [BatchFrame];
  /** An attach (first, or again after a reconnect) was answered. */
  attached: [Attached, { resumed: boolean }];
  admitted: [Admitted];
  /** Unsolicited server errors, and attached sessions lost on reconnect. */
  error: [ErrorFrame];
  warning: [string];
  /** A session this client was attached to (or its parent) was deleted; it is no longer attached. */
  session_deleted: [SessionDeleted];
};
