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

/** Identifier (session, submission, turn, approval id, route): 1–128 bytes of [A-Za-z0-9._:-] (ASCII, so chars = bytes). */
export const IDENTIFIER_PATTERN = new RegExp(`^[A-Za-z0-9._:-]{1,${LIMITS.identifierMaxBytes}}$`);
/** What an identifier must be, as error messages say it. */
export const IDENTIFIER_RULE = `1–${LIMITS.identifierMaxBytes} bytes of [A-Za-z0-9._:-]`;
const IDENT_MSG = `must be ${IDENTIFIER_RULE}`;
export const IdentifierSchema = z.string({ error: IDENT_MSG }).regex(IDENTIFIER_PATTERN, { error: IDENT_MSG });
export type Identifier = z.infer<typeof IdentifierSchema>;

/** Capability / command name: 1–256 UTF-8 bytes. */
export const NameSchema = byteString(LIMITS.nameMaxBytes, 'name');

const REQ_ID_MSG = `must be a string of 1–${LIMITS.reqIdMaxChars} chars`;
/** Client-chosen request id echoed in answers: 1–128 chars. */
export const ReqIdSchema = z
  .string({ error: REQ_ID_MSG })
  .min(1, { error: REQ_ID_MSG })
  .max(LIMITS.reqIdMaxChars, { error: REQ_ID_MSG });

/**
 * Whether `value` nests arrays/objects at most `maxDepth` levels deep (a scalar is 0,
 * `[]` and `{}` are 1). Iterative, so no input can overflow the stack; it stops at the
 * first path deeper than the bound.
 */
export function jsonDepthWithin(value: unknown, maxDepth: number): boolean {
  const stack: Array<{ v: unknown; depth: number }> = [{ v: value, depth: 0 }];
  for (let top = stack.pop(); top !== undefined; top = stack.pop()) {
    const { v, depth } = top;
    if (typeof v !== 'object' || v === null) continue;
    if (depth + 1 > maxDepth) return false;
    for (const child of Array.isArray(v) ? v : Object.values(v)) {
      if (typeof child === 'object' && child !== null) stack.push({ v: child, depth: depth + 1 });
    }
  }
  return true;
}

/**
 * Any JSON value nested at most `LIMITS.jsonMaxDepth` levels whose JSON.stringify is at
 * most `max` UTF-8 bytes. Depth is checked first (iteratively), so the size check never
 * recurses deeper than the bound.
 */
export const boundedJson = (max: number) =>
  z
    .unknown()
    .refine((v) => jsonDepthWithin(v, LIMITS.jsonMaxDepth), {
      error: `must be a JSON value nested at most ${LIMITS.jsonMaxDepth} levels deep`,
      abort: true,
    })
    .refine(
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
/** A shell allow rule (docs/tools.md): an exact command, or a prefix ending with `*`. */
export const ShellRuleSchema = z.string().min(1).max(LIMITS.shellRuleMaxChars);
/** A session's token budget: a positive number of tokens. */
export const TokenBudgetSchema = z.number().int().positive().max(Number.MAX_SAFE_INTEGER);

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
  /** Prompt tokens read from the provider's cache (part of input_tokens; 0 when none reported). Absent in journals written before it existed. */
  cached_input_tokens: CountSchema.optional(),
  /** Output tokens spent on thinking (part of output_tokens; 0 when none reported). Absent in older journals. */
  reasoning_tokens: CountSchema.optional(),
});
export type TokenUsage = z.infer<typeof TokenUsageSchema>;
