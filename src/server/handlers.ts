/** Handlers of the authenticated client frames (protocol.md "Client → server frames"). */
import {
  LIMITS,
  type AdmissionOutcome,
  type Attach,
  type ClientFrame,
  type CreateSession,
  type DeleteSession,
  type Detach,
  type History,
  type ListModels,
  type ListNodes,
  type ListSessions,
  type Submit,
} from '../../protocol/index.js';
import { AgentdError } from '../errors.js';
import type { SessionHandle, SubmitAnswer } from '../session/api.js';
import type { ClientConnection } from './connection.js';
import { modelsAnswer } from './models.js';
import { historyPage, readHistory, sessionsPage } from './pages.js';


/**
 * Handle one validated frame. Handlers may throw AgentdError; the connection turns it
 * into an error frame echoing the frame's req_id / submission_id.
 */
export function dispatchFrame(conn: ClientConnection, frame: ClientFrame): void | Promise<void> {
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
      return listModels(conn, frame);
    case 'delete_session':
      return deleteSession(conn, frame);
    case 'list_nodes':
      return listNodes(conn, frame);
  }
}

function deleteSession(conn: ClientConnection, frame: DeleteSession): void {
  conn.host.delete(frame.session_id, { force: frame.force ?? false }).then(
    (deleted) => {
      conn.log.info({ session_id: frame.session_id, deleted }, 'session deleted');
      conn.send({ type: 'session_deleted', req_id: frame.req_id, session_id: frame.session_id, deleted_session_ids: deleted });
    },
    (err: unknown) => {
      if (err instanceof AgentdError) conn.sendError(err.code, err.message, { req_id: frame.req_id });
      else {
        conn.log.error({ err, session_id: frame.session_id }, 'delete_session failed');
        conn.sendError('internal', `the session could not be deleted: ${(err as Error).message}`, { req_id: frame.req_id });
      }
    },
  );
}

/** The live nodes in cluster mode (clients fail over to them); a single daemon has none to name. */
async function listNodes(conn: ClientConnection, frame: ListNodes): Promise<void> {
  const source = conn.options.nodes;
  if (!source) return conn.send({ type: 'nodes', req_id: frame.req_id, cluster: false, nodes: [] });
  let nodes;
  try {
    nodes = await source();
  } catch (err) {
    conn.sendError('internal', `cannot list the cluster's nodes: ${(err as Error).message}`, { req_id: frame.req_id });
    return;
  }
  conn.send({ type: 'nodes', req_id: frame.req_id, cluster: true, nodes });
}

function listModels(conn: ClientConnection, frame: ListModels): void {
  const answer = modelsAnswer(frame, conn.options.models);
  if (answer === null) conn.sendError('internal', 'this server was started without a model catalog', { req_id: frame.req_id });
  else conn.send(answer);
}

async function createSession(conn: ClientConnection, frame: CreateSession): Promise<void> {
  // Answered once the session row and its first batch are committed.
  const session = await conn.host.create(frame.config);
  conn.log.info({ session_id: session.session_id }, 'session created');
  conn.send({ type: 'session_created', req_id: frame.req_id, session });
}

async function listSessions(conn: ClientConnection, frame: ListSessions): Promise<void> {
  const listed = await conn.host.list({ limit: frame.limit ?? LIMITS.listSessionsDefault, before: frame.before, include_children: frame.include_children });
  // Cut to the frame limit by encoded bytes; next_before continues after the cut.
  const page = sessionsPage(frame.req_id, listed.sessions, listed.next_before);
  if (page.left_out.length > 0) {
    conn.log.warn({ sessions: page.left_out }, 'descriptor larger than a frame left out of list_sessions');
  }
  conn.write(page.text);
}

function unknownSession(conn: ClientConnection, sessionId: string, ctx: { req_id?: string; submission_id?: string }): void {
  conn.sendError('unknown_session', `no session ${sessionId}`, ctx);
}

async function attach(conn: ClientConnection, frame: Attach): Promise<void> {
  const handle = await conn.host.open(frame.session_id);
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

function detach(conn: ClientConnection, frame: Detach): void {
  conn.detach(frame.session_id);
  conn.send({ type: 'detached', req_id: frame.req_id, session_id: frame.session_id });
}

async function history(conn: ClientConnection, frame: History): Promise<void> {
  const batches = await readHistory(conn.host, frame.session_id, frame.before_sequence, frame.limit ?? LIMITS.historyDefault);
  if (batches.length === 0 && !(await conn.host.open(frame.session_id))) {
    return unknownSession(conn, frame.session_id, { req_id: frame.req_id });
  }
  // The newest batches that fit in one frame; next_before_sequence continues before them.
  const page = historyPage(frame.req_id, frame.session_id, batches);
  if (!page.ok) {
    conn.sendError(
      'internal',
      `batch ${page.sequence} of session ${frame.session_id} is too large for a history answer; ` +
        `attach with after_sequence ${page.sequence - 1} to receive it`,
      { req_id: frame.req_id },
    );
    return;
  }
  conn.write(page.text);
}

function submit(conn: ClientConnection, frame: Submit): void | Promise<void> {
  // A resident session takes the submission at once (a burst reaches its inbox as sent).
  const ready = conn.host.ready?.(frame.session_id);
  if (ready) return submitTo(conn, frame, ready);
  return conn.host.open(frame.session_id).then((handle) =>
    handle ? submitTo(conn, frame, handle) : unknownSession(conn, frame.session_id, { submission_id: frame.submission.id }),
  );
}

function submitTo(conn: ClientConnection, frame: Submit, handle: SessionHandle): void {
  const sessionId = frame.session_id;
  const submissionId = frame.submission.id;

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

  const answer = handle.submit(frame.submission, onAdmitted, onRejected);
  if (answer instanceof Promise) {
    answer.then(
      (result) => answered(result),
      (err: unknown) => conn.sendError('internal', `submission not queued: ${(err as Error).message}`, { submission_id: submissionId }),
    );
  } else {
    answered(answer);
  }
  function answered(result: SubmitAnswer): void {
    if (!result.ok) {
      conn.sendError(result.code, result.message, { submission_id: submissionId });
      return;
    }
    conn.send({ type: 'queued', session_id: sessionId, submission_id: submissionId, ingress_seq: result.ingress_seq });
    queuedSent = true;
    early?.();
  }
}
