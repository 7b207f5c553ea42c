/**
 * The wire types the page speaks: protocol v1 from protocol/ (types only — nothing of zod
 * reaches the bundle) plus the runtime constants of protocol/limits.ts.
 */
export type {
  BatchFrame,
  ClientFrame,
  Event,
  ExecApprovalRequestMsg,
  ModelsFrame,
  Op,
  RouteInfo,
  ServerFrame,
  SessionDescriptor,
  TokenUsage,
  ApprovalDecision,
  CreateSessionConfig,
  HistoryFrame,
  Attached,
} from '../../protocol/schemas.js';
export { PROTOCOL_VERSION, LIMITS, CLOSE_UNAUTHORIZED, CLOSE_PROTOCOL } from '../../protocol/limits.js';
export { approveForSessionLabel } from '../../protocol/labels.js';
