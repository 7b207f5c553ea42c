/** Submission ops (client → session actor). All strict. */
import { z } from 'zod';
import { LIMITS } from './limits.js';
import {
  ApprovalDecisionSchema,
  IdentifierSchema,
  NameSchema,
  boundedJson,
  byteString,
} from './common.js';

/** How a message joins a running turn. */
export const MessageModeSchema = z.enum(['queue', 'steer']);
export type MessageMode = z.infer<typeof MessageModeSchema>;

/** Per-message overrides for the turn the message starts (docs/models.md); the session's route is unchanged. */
export const MessageOverridesSchema = z.strictObject({
  route: IdentifierSchema.optional(),
  reasoning_effort: z.string().min(1).max(LIMITS.reasoningEffortMaxChars).optional(),
});
export type MessageOverrides = z.infer<typeof MessageOverridesSchema>;

/** User message: 1 byte .. 1 MiB of UTF-8 text. */
export const MessageOpSchema = z.strictObject({
  type: z.literal('message'),
  text: byteString(LIMITS.messageTextMaxBytes, 'text'),
  mode: MessageModeSchema.optional(),
  overrides: MessageOverridesSchema.optional(),
});
export type MessageOp = z.infer<typeof MessageOpSchema>;

/** Interrupt the given turn. */
export const InterruptOpSchema = z.strictObject({
  type: z.literal('interrupt'),
  turn_id: IdentifierSchema,
});
export type InterruptOp = z.infer<typeof InterruptOpSchema>;

/** Answer a pending exec approval. */
export const ExecApprovalOpSchema = z.strictObject({
  type: z.literal('exec_approval'),
  id: IdentifierSchema,
  decision: ApprovalDecisionSchema,
});
export type ExecApprovalOp = z.infer<typeof ExecApprovalOpSchema>;

/** Switch model route. */
export const SetModelOpSchema = z.strictObject({
  type: z.literal('set_model'),
  route: IdentifierSchema,
  reasoning_effort: z.string().min(1).max(LIMITS.reasoningEffortMaxChars).optional(),
});
export type SetModelOp = z.infer<typeof SetModelOpSchema>;

/** Run a capability command; arguments/input are JSON values of ≤ 64 KiB and ≤ 64 levels of nesting each. */
export const CapabilityCommandOpSchema = z.strictObject({
  type: z.literal('capability_command'),
  capability: NameSchema,
  command: NameSchema,
  arguments: boundedJson(LIMITS.capabilityPayloadMaxBytes).optional(),
  input: boundedJson(LIMITS.capabilityPayloadMaxBytes).optional(),
});
export type CapabilityCommandOp = z.infer<typeof CapabilityCommandOpSchema>;

/** Ask to resume from another session's checkpoint. */
export const ResumeSessionOpSchema = z.strictObject({
  type: z.literal('resume_session'),
  session_id: IdentifierSchema,
});
export type ResumeSessionOp = z.infer<typeof ResumeSessionOpSchema>;

/** Any op, discriminated on `type`. */
export const OpSchema = z.discriminatedUnion('type', [
  MessageOpSchema,
  InterruptOpSchema,
  ExecApprovalOpSchema,
  SetModelOpSchema,
  CapabilityCommandOpSchema,
  ResumeSessionOpSchema,
]);
export type Op = z.infer<typeof OpSchema>;

/** A client submission: client-chosen id + op. */
export const SubmissionSchema = z.strictObject({
  id: IdentifierSchema,
  op: OpSchema,
});
export type Submission = z.infer<typeof SubmissionSchema>;
