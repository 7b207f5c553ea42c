/**
 * Requests and their answers: the client frames that carry a `req_id`, which server frame
 * answers each, and what enqueueing a submission answers (`queued` or a refusal).
 */
import type { z } from 'zod';
import type { Attach, ClientFrameSchema, EnqueueRefusalCode, ListSessions, Queued, ServerFrame, Sessions } from './frames.js';

type ClientFrameInput = z.input<typeof ClientFrameSchema>;
type WithoutReqId<T> = T extends unknown ? Omit<T, 'req_id'> : never;

/** A request frame as a client builds it, before it assigns the `req_id`. */
export type ClientRequest = WithoutReqId<Extract<ClientFrameInput, { req_id: string }>>;
/** The `type` of every request frame. */
export type ClientRequestType = ClientRequest['type'];

/** The server frame `type` that answers each request (an `error` frame may answer any). */
export const REQUEST_ANSWER = {
  create_session: 'session_created',
  list_sessions: 'sessions',
  attach: 'attached',
  detach: 'detached',
  history: 'history',
  list_models: 'models',
  delete_session: 'session_deleted',
  list_nodes: 'nodes',
} as const satisfies Record<ClientRequestType, ServerFrame['type']>;

/** The answer frame of request type `T`. */
export type AnswerOf<T extends ClientRequestType> = Extract<ServerFrame, { type: (typeof REQUEST_ANSWER)[T] }>;

/** The optional fields of `list_sessions`, as a client API takes them. */
export type ListSessionsOptions = Pick<ListSessions, 'limit' | 'before' | 'include_children'>;
/** The optional fields of `attach`, as a client API takes them. */
export type AttachOptions = Pick<Attach, 'replay_batches' | 'after_sequence'>;
/** One page of a `sessions` answer. */
export type SessionsPage = Pick<Sessions, 'sessions' | 'next_before'>;

/** What enqueueing a submission answers: its ingress sequence (`queued`), or why it was refused. */
export type EnqueueResult =
  | { ok: true; ingress_seq: Queued['ingress_seq'] }
  | { ok: false; code: EnqueueRefusalCode; message: string };
