/** Parsing of raw WebSocket text into validated frames. */
import { z } from 'zod';
import { LIMITS } from './limits.js';
import { utf8Bytes } from './common.js';
import { ClientFrameSchema, ServerFrameSchema, SubmitSchema, type ClientFrame, type ErrorCode, type ServerFrame } from './frames.js';

/** Rejection of a client frame; `code` maps directly onto an `error` frame. */
export interface FrameError {
  code: Extract<ErrorCode, 'invalid_frame' | 'invalid_submission'>;
  message: string;
  req_id?: string;
  submission_id?: string;
}

export type ParseClientFrameResult = { ok: true; frame: ClientFrame } | { ok: false; error: FrameError };

/** Submit envelope with the submission left unchecked, to tell frame vs submission errors apart. */
const SubmitEnvelopeSchema = SubmitSchema.extend({ submission: z.unknown() });

const isRecord = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v);

/** Short human message for the first issue, e.g. `session_id: must be 1–128 bytes of …`. */
export function describeIssue(error: z.ZodError, prefix: PropertyKey[] = []): string {
  const issue = error.issues[0];
  if (!issue) return 'invalid';
  const path = [...prefix, ...issue.path].map(String).join('.');
  let text = issue.message;
  if (issue.code === 'unrecognized_keys') {
    // Name a few; a frame with 300 000 unknown keys must not cost a 300 000-key message.
    const named = issue.keys.slice(0, 8).map((k) => `"${k.length > 64 ? `${k.slice(0, 64)}…` : k}"`).join(', ');
    const more = issue.keys.length > 8 ? ` and ${issue.keys.length - 8} more` : '';
    text = `unknown field${issue.keys.length > 1 ? 's' : ''} ${named}${more}`;
  } else if (issue.code === 'invalid_union' && 'options' in issue && Array.isArray(issue.options)) {
    text = `must be one of ${issue.options.map((o) => `"${String(o)}"`).join(', ')}`;
  }
  return path ? `${path}: ${text}` : text;
}

/** Parse and validate one client frame. Never throws. */
export function parseClientFrame(text: string): ParseClientFrameResult {
  if (utf8Bytes(text) > LIMITS.frameMaxBytes) {
    return { ok: false, error: { code: 'invalid_frame', message: `frame exceeds ${LIMITS.frameMaxBytes} bytes` } };
  }
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch {
    return { ok: false, error: { code: 'invalid_frame', message: 'frame is not valid JSON' } };
  }
  if (!isRecord(raw)) {
    return { ok: false, error: { code: 'invalid_frame', message: 'frame must be a JSON object' } };
  }
  const parsed = ClientFrameSchema.safeParse(raw);
  if (parsed.success) return { ok: true, frame: parsed.data };

  const echo: Pick<FrameError, 'req_id' | 'submission_id'> = {};
  if (typeof raw.req_id === 'string') echo.req_id = raw.req_id;
  if (raw.type === 'submit' && isRecord(raw.submission) && typeof raw.submission.id === 'string') {
    echo.submission_id = raw.submission.id;
  }
  if (raw.type === 'submit' && SubmitEnvelopeSchema.safeParse(raw).success) {
    const sub = SubmitSchema.shape.submission.safeParse(raw.submission);
    const message = sub.success ? describeIssue(parsed.error) : describeIssue(sub.error, ['submission']);
    return { ok: false, error: { code: 'invalid_submission', message, ...echo } };
  }
  return { ok: false, error: { code: 'invalid_frame', message: describeIssue(parsed.error), ...echo } };
}

/** Parse and validate one server frame (for clients and tests). Throws on invalid input. */
export function parseServerFrame(text: string): ServerFrame {
  const raw: unknown = JSON.parse(text);
  const parsed = ServerFrameSchema.safeParse(raw);
  if (!parsed.success) throw new Error(`invalid server frame: ${describeIssue(parsed.error)}`);
  return parsed.data;
}
