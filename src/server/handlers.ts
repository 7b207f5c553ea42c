/** Handlers of the authenticated client frames (protocol.md "Client → server frames"). */
import {
  LIMITS,
  encodeHistoryFrame,
  type AdmissionOutcome,
  type Attach,
  type ClientFrame,
  type CreateSession,
  type Detach,
  type History,
  type ListSessions,
  type Submit,
} from '../../protocol/index.js';
import type { Connection } from './connection.js';
import { listModels } from './models.js';

/**
 * A history answer carries at most this many bytes of batches (but at least one batch),
 * so answers stay below the 4 MiB frame limit clients are likely to enforce.
 */
export const HISTORY_MAX_BYTES = 3 * 1024 * 1024;

/**
 * Handle one validated frame. Handlers may throw AgentdError; the connection turns it
 * into an error frame echoing the frame's req_id / submission_id.
 */
export function dispatchFrame(conn: Connection, frame: ClientFrame): void {
  switch (frame.type) {
    case 'hello':
      conn.sendError('invalid_frame', 'hello was already received on this connection');
      return;
    case 'create_session':
      return createSession(conn, frame);
    case 'list_sessions':
      return listSessions(conn, frame);
    case 'attach':
      return attach(conn, frame);
    case 'detach':
      return detach(conn, frame);
    case 'history':
      return history(conn, frame);
    case 'submit':
      return submit(conn, frame);
    case 'list_models':
      return listModels(conn, frame, conn.options.models);
  }
}

function createSession(conn: Connection, frame: CreateSession): void {
  const session = conn.host.create(frame.config);
  conn.log.info({ session_id: session.session_id }, 'session created');
  conn.send({ type: 'session_created', req_id: frame.req_id, session });
}

function listSessions(conn: Connection, frame: ListSessions): void {
  const page = conn.host.list({ limit: frame.limit ?? LIMITS.listSessionsDefault, before: frame.before });
  conn.send({ type: 'sessions', req_id: frame.req_id, sessions: page.sessions, next_before: page.next_before });
}

function unknownSession(conn: Connection, sessionId: string, ctx: { req_id?: string; submission_id?: string }): void {
  conn.sendError('unknown_session', `no session ${sessionId}`, ctx);
}

function attach(conn: Connection, frame: Attach): void {
  const handle = conn.host.open(frame.session_id);
  if (!handle) return unknownSession(conn, frame.session_id, { req_id: frame.req_id });
  // From here to conn.attach (which subscribes) everything is synchronous: no commit
  // can fall between reading the head and subscribing.
  const head = handle.headSequence();
  let after: number;
  if (frame.after_sequence !== undefined) {
    if (frame.after_sequence > head) {
      conn.sendError(
        'invalid_frame',
        `after_sequence ${frame.after_sequence} is beyond the session's head_sequence ${head}`,
        { req_id: frame.req_id },
      );
      return;
    }
    after = frame.after_sequence;
  } else {
    after = Math.max(0, head - (frame.replay_batches ?? LIMITS.replayBatches));
  }
  const session = handle.descriptor();
  conn.attach(handle, after, () =>
    conn.send({
      type: 'attached',
      req_id: frame.req_id,
      session,
      head_sequence: head,
      next_before_sequence: after > 0 ? after + 1 : null,
    }),
  );
}

function detach(conn: Connection, frame: Detach): void {
  conn.detach(frame.session_id);
  conn.send({ type: 'detached', req_id: frame.req_id, session_id: frame.session_id });
}

function history(conn: Connection, frame: History): void {
  const batches = conn.host.readBefore(frame.session_id, frame.before_sequence, frame.limit ?? LIMITS.historyDefault);
  if (batches.length === 0 && !conn.host.open(frame.session_id)) {
    return unknownSession(conn, frame.session_id, { req_id: frame.req_id });
  }
  // Keep the newest batches that fit in HISTORY_MAX_BYTES (always at least one).
  let start = batches.length;
  let bytes = 0;
  while (start > 0) {
    const size = batches[start - 1]!.frame.length;
    if (start < batches.length && bytes + size > HISTORY_MAX_BYTES) break;
    bytes += size;
    start--;
  }
  const kept = start === 0 ? batches : batches.slice(start);
  const oldest = kept[0]?.sequence;
  const next = oldest !== undefined && oldest > 1 ? oldest : null;
  conn.write(encodeHistoryFrame(frame.req_id, frame.session_id, kept.map((b) => b.frame), next));
}

function submit(conn: Connection, frame: Submit): void {
  const sessionId = frame.session_id;
  const submissionId = frame.submission.id;
  const handle = conn.host.open(sessionId);
  if (!handle) return unknownSession(conn, sessionId, { submission_id: submissionId });

  // `admitted` must follow `queued` even if the session answers synchronously.
  let queuedSent = false;
  let early: (() => void) | undefined;
  const later = (fn: () => void): void => {
    if (queuedSent) fn();
    else early = fn;
  };
  const onAdmitted = (outcome: AdmissionOutcome): void =>
    later(() => conn.send({ type: 'admitted', session_id: sessionId, submission_id: submissionId, outcome }));
  const onRejected = (message: string, code: 'busy' | 'internal' = 'internal'): void =>
    later(() => conn.sendError(code, `message not admitted: ${message}`, { submission_id: submissionId }));

  const result = handle.submit(frame.submission, onAdmitted, onRejected);
  if (!result.ok) {
    conn.sendError(result.code, result.message, { submission_id: submissionId });
    return;
  }
  conn.send({ type: 'queued', session_id: sessionId, submission_id: submissionId, ingress_seq: result.ingress_seq });
  queuedSent = true;
  early?.();
}
