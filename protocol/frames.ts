/** Client and server frames. Client frames are strict (unknown fields rejected). */
import { z } from 'zod';
import { LIMITS } from './limits.js';
import {
  ApprovalPolicySchema,
  byteString,
  CountSchema,
  IdentifierSchema,
  MillisSchema,
  ModelInfoSchema,
  ReqIdSchema,
  ShellRuleSchema,
  TokenBudgetSchema,
} from './common.js';
import { EventSchema, ExecApprovalRequestMsgSchema } from './events.js';
import { SubmissionSchema } from './ops.js';
import { SessionMcpServersSchema } from './mcp_servers.js';

// ---------- client → server ----------

/** First frame of a connection. `protocol` is any int so the server can answer `protocol` errors. */
export const HelloSchema = z.strictObject({
  type: z.literal('hello'),
  protocol: z.number().int(),
  client: z.string().max(LIMITS.clientNameMaxChars).optional(),
  token: z.string().max(LIMITS.tokenMaxChars).optional(),
});
export type Hello = z.infer<typeof HelloSchema>;

/** Session options chosen at creation; omitted fields come from config. */
export const CreateSessionConfigSchema = z.strictObject({
  model_route: IdentifierSchema.optional(),
  cwd: z.string().min(1).max(LIMITS.cwdMaxChars).optional(),
  approval_policy: ApprovalPolicySchema.optional(),
  title: z.string().max(LIMITS.titleMaxChars).optional(),
  /** The session's own system prompt (docs/context.md), kept in its checkpoint: ≤ 64 KiB. */
  system_prompt: byteString(LIMITS.systemPromptMaxBytes, 'system prompt').optional(),
  /** Shell commands that never wait for approval under `ask` (docs/tools.md), besides the config's. */
  shell_allow: z.array(ShellRuleSchema).max(LIMITS.shellAllowMaxRules).optional(),
  /** The session's token budget (input + output tokens of every model call; docs/tools.md). */
  token_budget: TokenBudgetSchema.optional(),
  /** The session's own MCP servers (docs/tools.md), besides the configured ones; kept in its checkpoint. */
  mcp_servers: SessionMcpServersSchema.optional(),
});
export type CreateSessionConfig = z.infer<typeof CreateSessionConfigSchema>;

export const CreateSessionSchema = z.strictObject({
  type: z.literal('create_session'),
  req_id: ReqIdSchema,
  config: CreateSessionConfigSchema.default({}),
});
export type CreateSession = z.infer<typeof CreateSessionSchema>;

/** Page sessions, newest first; `before` is a session id cursor. */
export const ListSessionsSchema = z.strictObject({
  type: z.literal('list_sessions'),
  req_id: ReqIdSchema,
  limit: z.number().int().min(1).max(LIMITS.pageMax).optional(),
  before: IdentifierSchema.optional(),
  /** Subagent sessions (with a `parent_session_id`) are left out unless true. */
  include_children: z.boolean().optional(),
});
export type ListSessions = z.infer<typeof ListSessionsSchema>;

export const AttachSchema = z.strictObject({
  type: z.literal('attach'),
  req_id: ReqIdSchema,
  session_id: IdentifierSchema,
  replay_batches: z.number().int().min(0).max(LIMITS.replayBatchesMax).optional(),
  after_sequence: z.number().int().min(0).optional(),
});
export type Attach = z.infer<typeof AttachSchema>;

export const DetachSchema = z.strictObject({
  type: z.literal('detach'),
  req_id: ReqIdSchema,
  session_id: IdentifierSchema,
});
export type Detach = z.infer<typeof DetachSchema>;

export const HistorySchema = z.strictObject({
  type: z.literal('history'),
  req_id: ReqIdSchema,
  session_id: IdentifierSchema,
  before_sequence: z.number().int().min(1),
  limit: z.number().int().min(1).max(LIMITS.pageMax).optional(),
});
export type History = z.infer<typeof HistorySchema>;

export const SubmitSchema = z.strictObject({
  type: z.literal('submit'),
  session_id: IdentifierSchema,
  submission: SubmissionSchema,
});
export type Submit = z.infer<typeof SubmitSchema>;

/** Ask for the configured model routes (answered by `models`). */
export const ListModelsSchema = z.strictObject({
  type: z.literal('list_models'),
  req_id: ReqIdSchema,
});
export type ListModels = z.infer<typeof ListModelsSchema>;

/**
 * Delete a session, its subagent sessions and everything the journal holds of them
 * (docs/sessions.md). A session with a running or waiting turn is refused `busy` unless
 * `force`, which interrupts the turn first. Answered by `session_deleted`.
 */
export const DeleteSessionSchema = z.strictObject({
  type: z.literal('delete_session'),
  req_id: ReqIdSchema,
  session_id: IdentifierSchema,
  force: z.boolean().optional(),
});
export type DeleteSession = z.infer<typeof DeleteSessionSchema>;
/** Ask which nodes a client may connect to (cluster mode, docs/cluster.md); answered by `nodes`. */
export const ListNodesSchema = z.strictObject({
  type: z.literal('list_nodes'),
  req_id: ReqIdSchema,
});
export type ListNodes = z.infer<typeof ListNodesSchema>;

/** Any client frame, discriminated on `type`. */
export const ClientFrameSchema = z.discriminatedUnion('type', [
  HelloSchema,
  CreateSessionSchema,
  ListSessionsSchema,
  AttachSchema,
  DetachSchema,
  HistorySchema,
  SubmitSchema,
  ListModelsSchema,
  DeleteSessionSchema,
  ListNodesSchema,
]);
export type ClientFrame = z.infer<typeof ClientFrameSchema>;

// ---------- server → client ----------

export const WelcomeSchema = z.strictObject({
  type: z.literal('welcome'),
  protocol: z.number().int(),
  server: z.string(),
});
export type Welcome = z.infer<typeof WelcomeSchema>;

/** Error codes of the `error` frame. */
export const ErrorCodeSchema = z.enum([
  'protocol',
  'unauthorized',
  'invalid_frame',
  'invalid_submission',
  'busy',
  'stopped',
  'unknown_session',
  'internal',
]);
export type ErrorCode = z.infer<typeof ErrorCodeSchema>;
/** The codes a handshake fails with; each closes the socket (`CLOSE_PROTOCOL`, `CLOSE_UNAUTHORIZED`) and retrying as before cannot help. */
export const HandshakeErrorCodeSchema = ErrorCodeSchema.extract(['protocol', 'unauthorized']);
export type HandshakeErrorCode = z.infer<typeof HandshakeErrorCodeSchema>;
/** The codes a submission is refused with when it cannot enter the inbox. */
export const EnqueueRefusalCodeSchema = ErrorCodeSchema.extract(['busy', 'stopped']);
export type EnqueueRefusalCode = z.infer<typeof EnqueueRefusalCodeSchema>;

export const ErrorFrameSchema = z.strictObject({
  type: z.literal('error'),
  code: ErrorCodeSchema,
  message: z.string(),
  req_id: z.string().optional(),
  submission_id: z.string().optional(),
});
export type ErrorFrame = z.infer<typeof ErrorFrameSchema>;

/** Live status of a session, as its descriptor reports it. */
export const SessionStatusSchema = z.enum(['idle', 'running', 'awaiting_approval']);
export type SessionStatus = z.infer<typeof SessionStatusSchema>;

/** Session descriptor; `pending_approval` is the full `exec_approval_request` msg (with `type`). */
/** The descriptor's `context`: estimated tokens of the next model call against the route's window (null: none configured). */
export const ContextUsageSchema = z.strictObject({
  estimated_tokens: CountSchema,
  context_window: ModelInfoSchema.shape.context_window,
});
export type ContextUsage = z.infer<typeof ContextUsageSchema>;

export const SessionDescriptorSchema = z.strictObject({
  session_id: IdentifierSchema,
  title: z.string().nullable(),
  created_at: MillisSchema,
  updated_at: MillisSchema,
  status: SessionStatusSchema,
  model: ModelInfoSchema,
  cwd: z.string(),
  approval_policy: ApprovalPolicySchema,
  head_sequence: CountSchema,
  active_turn_id: IdentifierSchema.nullable(),
  pending_approval: ExecApprovalRequestMsgSchema.nullable(),
  /** Admitted messages waiting for their own turn. */
  queued_turns: CountSchema,
  /** tools2 (docs/tools.md): the session whose `delegate` call started this one, and that call. */
  parent_session_id: IdentifierSchema.nullable(),
  parent_call_id: IdentifierSchema.nullable(),
  /** While a subagent of this session waits for an approval: which child, and its request. */
  pending_child_approval: z
    .strictObject({ child_session_id: IdentifierSchema, request: ExecApprovalRequestMsgSchema })
    .nullable(),
  /** The estimate of the next model call's input tokens, and the route's window (docs/context.md). */
  context: ContextUsageSchema,
  /** The session's token budget (docs/tools.md); null when it has none. */
  token_budget: TokenBudgetSchema.nullable(),
});
export type SessionDescriptor = z.infer<typeof SessionDescriptorSchema>;

export const SessionCreatedSchema = z.strictObject({
  type: z.literal('session_created'),
  req_id: z.string(),
  session: SessionDescriptorSchema,
});
export type SessionCreated = z.infer<typeof SessionCreatedSchema>;

export const SessionsSchema = z.strictObject({
  type: z.literal('sessions'),
  req_id: z.string(),
  sessions: z.array(SessionDescriptorSchema),
  next_before: IdentifierSchema.nullable(),
});
export type Sessions = z.infer<typeof SessionsSchema>;

export const AttachedSchema = z.strictObject({
  type: z.literal('attached'),
  req_id: z.string(),
  session: SessionDescriptorSchema,
  head_sequence: CountSchema,
  next_before_sequence: z.number().int().min(1).nullable(),
});
export type Attached = z.infer<typeof AttachedSchema>;

export const DetachedSchema = z.strictObject({
  type: z.literal('detached'),
  req_id: z.string(),
  session_id: IdentifierSchema,
});
export type Detached = z.infer<typeof DetachedSchema>;

/** One committed journal batch; sequences are 1, 2, 3, … per session. */
export const BatchFrameSchema = z.strictObject({
  type: z.literal('batch'),
  session_id: IdentifierSchema,
  sequence: z.number().int().min(1),
  committed_at: MillisSchema,
  events: z.array(EventSchema),
});
export type BatchFrame = z.infer<typeof BatchFrameSchema>;

export const HistoryFrameSchema = z.strictObject({
  type: z.literal('history'),
  req_id: z.string(),
  session_id: IdentifierSchema,
  batches: z.array(BatchFrameSchema),
  next_before_sequence: z.number().int().min(1).nullable(),
});
export type HistoryFrame = z.infer<typeof HistoryFrameSchema>;

/** The submission entered the inbox (nothing more). */
export const QueuedSchema = z.strictObject({
  type: z.literal('queued'),
  session_id: IdentifierSchema,
  submission_id: IdentifierSchema,
  ingress_seq: CountSchema,
});
export type Queued = z.infer<typeof QueuedSchema>;

/** `accepted`: committed now; `already_accepted`: this session admitted that id before. */
export const AdmissionOutcomeSchema = z.enum(['accepted', 'already_accepted']);
export type AdmissionOutcome = z.infer<typeof AdmissionOutcomeSchema>;

/** A `message` submission is durably committed. */
export const AdmittedSchema = z.strictObject({
  type: z.literal('admitted'),
  session_id: IdentifierSchema,
  submission_id: IdentifierSchema,
  outcome: AdmissionOutcomeSchema,
});
export type Admitted = z.infer<typeof AdmittedSchema>;

/** One configured model route as listed by `models`; `context_window` null when not configured. */
export const RouteInfoSchema = z.strictObject({
  route: IdentifierSchema,
  provider: z.string(),
  model: z.string(),
  context_window: ModelInfoSchema.shape.context_window,
  reasoning_efforts: z.array(z.string()),
});
export type RouteInfo = z.infer<typeof RouteInfoSchema>;

/** Answer to `list_models`: the default route and every route, in configuration order. */
export const ModelsFrameSchema = z.strictObject({
  type: z.literal('models'),
  req_id: z.string(),
  default: IdentifierSchema,
  routes: z.array(RouteInfoSchema),
});
export type ModelsFrame = z.infer<typeof ModelsFrameSchema>;

/**
 * A session was deleted: the answer to `delete_session` (with its `req_id`), and what
 * every client attached to the session or to one of its subagent sessions receives
 * (without `req_id`). `session_id` is the session the delete named; `deleted_session_ids`
 * lists every session removed with it (itself first, then its subagent sessions).
 */
export const SessionDeletedSchema = z.strictObject({
  type: z.literal('session_deleted'),
  req_id: z.string().optional(),
  session_id: IdentifierSchema,
  deleted_session_ids: z.array(IdentifierSchema).optional(),
});
export type SessionDeleted = z.infer<typeof SessionDeletedSchema>;
/** One live node of a cluster: its id and the address clients reach it at (its advertised URL). */
export const NodeInfoSchema = z.strictObject({
  node_id: z.string(),
  url: z.string(),
  /** The node that answered. */
  self: z.boolean(),
});
export type NodeInfo = z.infer<typeof NodeInfoSchema>;

/** Answer to `list_nodes`: the live nodes (cluster mode), or `cluster: false` and none on a single daemon. */
export const NodesFrameSchema = z.strictObject({
  type: z.literal('nodes'),
  req_id: z.string(),
  cluster: z.boolean(),
  nodes: z.array(NodeInfoSchema),
});
export type NodesFrame = z.infer<typeof NodesFrameSchema>;

/** Any server frame, discriminated on `type`. */
export const ServerFrameSchema = z.discriminatedUnion('type', [
  WelcomeSchema,
  ErrorFrameSchema,
  SessionCreatedSchema,
  SessionsSchema,
  AttachedSchema,
  DetachedSchema,
  HistoryFrameSchema,
  QueuedSchema,
  AdmittedSchema,
  BatchFrameSchema,
  ModelsFrameSchema,
  SessionDeletedSchema,
  NodesFrameSchema,
]);
export type ServerFrame = z.infer<typeof ServerFrameSchema>;
