/** Shared building blocks for the wire schemas. */
import { z } from 'zod';
import { LIMITS } from './limits.js';

/** UTF-8 byte length of a string. */
export const utf8Bytes = (s: string): number => Buffer.byteLength(s, 'utf8');

/** String of 1..max UTF-8 bytes (the char-count max is a cheap prefilter that also shows in JSON Schema). */
export const byteString = (max: number, what = 'string') =>
  z
    .string({ error: `must be a ${what} of 1–${max} bytes` })
    .min(1, { error: `must be a ${what} of 1–${max} bytes` })
    .max(max, { error: `must be a ${what} of 1–${max} bytes` })
    .refine((s) => utf8Bytes(s) <= max, { error: `must be a ${what} of 1–${max} bytes` });

const IDENT_MSG = `must be 1–${LIMITS.identifierMaxBytes} bytes of [A-Za-z0-9._:-]`;
/** Identifier: 1–128 bytes of [A-Za-z0-9._:-] (ASCII, so chars = bytes). */
export const IdentifierSchema = z
  .string({ error: IDENT_MSG })
  .regex(/^[A-Za-z0-9._:-]{1,128}$/, { error: IDENT_MSG });
export type Identifier = z.infer<typeof IdentifierSchema>;

/** Capability / command name: 1–256 UTF-8 bytes. */
export const NameSchema = byteString(LIMITS.nameMaxBytes, 'name');

/** Client-chosen request id echoed in answers: 1–128 chars. */
export const ReqIdSchema = z
  .string({ error: 'must be a string of 1–128 chars' })
  .min(1, { error: 'must be a string of 1–128 chars' })
  .max(128, { error: 'must be a string of 1–128 chars' });

/** Any JSON value whose JSON.stringify is at most `max` UTF-8 bytes. */
export const boundedJson = (max: number) =>
  z.unknown().refine(
    (v) => {
      if (v === undefined) return true;
      try {
        const s = JSON.stringify(v);
        return s !== undefined && utf8Bytes(s) <= max;
      } catch {
        return false;
      }
    },
    { error: `must be a JSON value of at most ${max} bytes` },
  );

/** Milliseconds since the epoch / durations / counters. */
export const MillisSchema = z.number().int().nonnegative();
export const CountSchema = z.number().int().nonnegative();

/** Per-session approval policy. */
export const ApprovalPolicySchema = z.enum(['ask', 'auto']);
export type ApprovalPolicy = z.infer<typeof ApprovalPolicySchema>;

/** Decision carried by `exec_approval` and `approval_resolved`. */
export const ApprovalDecisionSchema = z.enum(['approve', 'approve_for_session', 'deny', 'abort']);
export type ApprovalDecision = z.infer<typeof ApprovalDecisionSchema>;

/** Resolved model of a session. */
export const ModelInfoSchema = z.strictObject({
  route: IdentifierSchema,
  model: z.string(),
  reasoning_effort: z.string().nullable(),
  context_window: z.number().int().positive().nullable(),
});
export type ModelInfo = z.infer<typeof ModelInfoSchema>;

/** Token counters. */
export const TokenUsageSchema = z.strictObject({
  input_tokens: CountSchema,
  output_tokens: CountSchema,
});
export type TokenUsage = z.infer<typeof TokenUsageSchema>;
