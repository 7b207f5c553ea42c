/**
 * What a notification says and how it is sent (docs/sessions.md#notifications): the
 * payload of an event (session, title, event, the approval's tool and a one-line
 * summary, the web UI link without the token), and its HTTP body and headers in the
 * `json` format (signed with HMAC-SHA256 when a secret is set) or the `ntfy` format.
 */
import { createHmac } from 'node:crypto';
import type { Event } from '../../protocol/index.js';
import type { NotifyConfig, NotifyEvent } from '../config/config.js';
import { sanitizeLine } from '../render/sanitize.js';
import { describeCall } from '../render/tool-call.js';

/** The JSON body of a notification (`format: "json"`). */
export interface NotificationPayload {
  event: NotifyEvent;
  session_id: string;
  /** The session's title (null: none yet). */
  title: string | null;
  /** The parent session of a subagent's session, else null. */
  parent_session_id: string | null;
  turn_id: string | null;
  /** An approval: the tool waiting and its approval id. */
  tool?: string;
  approval_id?: string;
  /** An approval: the call in one line (the command, the path…); a finished turn: its last reply's first line; a failed one: its error. */
  summary: string;
  /** A failed turn: its error code. */
  error_code?: string;
  /** The session in the web UI (without the token), when the daemon knows its address. */
  url: string | null;
  /** When the event was committed (ms since the epoch). */
  ts: number;
}

/** What the session is, looked up when its event is seen. */
export interface SessionFacts {
  title: string | null;
  parent_session_id: string | null;
}

/** Longest summary, in characters (a longer one is cut and ends with `…`). */
export const SUMMARY_MAX_CHARS = 200;

/** The first visible line of `text`, control characters removed, at most SUMMARY_MAX_CHARS. */
export function oneLine(text: string): string {
  const line = text.split(/\r?\n/).find((l) => l.trim() !== '') ?? '';
  const clean = sanitizeLine(line).trim();
  return clean.length > SUMMARY_MAX_CHARS ? `${clean.slice(0, SUMMARY_MAX_CHARS - 1)}…` : clean;
}

/** The notification an event asks for under `wanted`, or null (other events; a subagent's own turn ends). */
export function payloadOf(sessionId: string, event: Event, facts: SessionFacts, wanted: ReadonlySet<NotifyEvent>, webUrl: string | null): NotificationPayload | null {
  const { msg } = event;
  const base = {
    session_id: sessionId,
    title: facts.title,
    parent_session_id: facts.parent_session_id,
    turn_id: event.turn_id ?? null,
    url: webUrl === null ? null : `${webUrl}/#session=${encodeURIComponent(sessionId)}`,
    ts: event.ts,
  };
  switch (msg.type) {
    case 'exec_approval_request':
      if (!wanted.has('approval')) return null;
      return { event: 'approval', ...base, tool: msg.tool, approval_id: msg.approval_id, summary: oneLine(describeCall(msg.tool, msg.arguments)) };
    case 'turn_complete':
      // A subagent's turn ends inside its parent's turn: the parent's end is the one to tell.
      if (!wanted.has('turn_complete') || facts.parent_session_id !== null) return null;
      return { event: 'turn_complete', ...base, summary: oneLine(msg.last_message ?? '') };
    case 'turn_failed':
      if (!wanted.has('turn_failed') || facts.parent_session_id !== null) return null;
      return { event: 'turn_failed', ...base, summary: oneLine(msg.error.message), error_code: msg.error.code };
    default:
      return null;
  }
}

/** An HTTP request ready to POST. */
export interface OutgoingRequest {
  body: string;
  headers: Record<string, string>;
}

/** `sha256=HEX`: the hex HMAC-SHA256 of the raw body under `secret`. */
export function signature(body: string, secret: string): string {
  return `sha256=${createHmac('sha256', secret).update(body, 'utf8').digest('hex')}`;
}

const NTFY_TITLE: Record<NotifyEvent, string> = {
  approval: 'Approval needed',
  turn_complete: 'Turn complete',
  turn_failed: 'Turn failed',
};
const NTFY_PRIORITY: Record<NotifyEvent, string> = { approval: 'high', turn_complete: 'default', turn_failed: 'high' };
const NTFY_TAGS: Record<NotifyEvent, string> = { approval: 'warning', turn_complete: 'white_check_mark', turn_failed: 'x' };

/** Header values are ASCII without control characters: everything else becomes `?`. */
function headerValue(text: string): string {
  return text.replace(/[^\x20-\x7e]/g, '?');
}

/** The request of a payload in the configured format, signed when `secret` is set. */
export function encodeNotification(payload: NotificationPayload, format: NotifyConfig['format'], secret: string | undefined): OutgoingRequest {
  let body: string;
  let headers: Record<string, string>;
  if (format === 'ntfy') {
    const who = payload.title ? `${payload.title} (${payload.session_id})` : payload.session_id;
    const what = payload.event === 'approval' ? `${payload.tool}: ${payload.summary}` : payload.summary;
    body = `${what || NTFY_TITLE[payload.event]}\n${who}`;
    headers = {
      'content-type': 'text/plain; charset=utf-8',
      title: headerValue(`${NTFY_TITLE[payload.event]}: ${payload.title ?? payload.session_id}`),
      priority: NTFY_PRIORITY[payload.event],
      tags: NTFY_TAGS[payload.event],
      ...(payload.url !== null && { click: headerValue(payload.url) }),
    };
  } else {
    body = JSON.stringify(payload);
    headers = { 'content-type': 'application/json' };
  }
  headers['user-agent'] = 'agentd-notify';
  if (secret !== undefined) headers['x-agentd-signature'] = signature(body, secret);
  return { body, headers };
}
