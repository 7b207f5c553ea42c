/**
 * Folding journal events into display items and session info: one handler per event
 * type (ON_EVENT), each editing the Folder's working copies (folder.ts). An event type
 * without a handler shows as a notice naming it.
 */
import type { BatchFrame, Event, EventMsg, EventMsgOf } from '../../protocol/index.js';
import type { Folder } from './folder.js';
import { appendOutput } from './items.js';
import { formatCount } from '../render/format.js';

/** Where an event is folded: its batch's sequence, the key of an item it adds, the event. */
interface At {
  seq: number;
  key: string;
  ev: Event;
}

type Handler<T extends EventMsg['type']> = (f: Folder, m: EventMsgOf<T>, at: At) => void;

const ON_EVENT: { [T in EventMsg['type']]?: Handler<T> } = {
  session_configured: (f, m, at) => {
    f.info.sessionId = m.session_id;
    f.info.model = m.model;
    f.info.cwd = m.cwd;
    f.info.approvalPolicy = m.approval_policy;
    f.info.title = m.title;
    f.notice(at.seq, at.key, 'info', `session ${m.session_id}`, `${m.model.route} · ${m.cwd} · approvals: ${m.approval_policy}`);
  },
  user_message: (f, m, at) => {
    f.closeAgent();
    f.add({ kind: 'user', key: at.key, seq: at.seq, text: m.text, mode: m.mode });
  },
  turn_started: (f, m, at) => {
    f.closeAgent();
    f.info.activeTurnId = m.turn_id;
    f.info.turnStartedAt = at.ev.ts;
  },
  agent_reasoning_delta: (f, m, at) => {
    const open = f.openReasoning();
    if (open !== null) f.edit<'reasoning'>(open).text += m.delta;
    else f.add({ kind: 'reasoning', key: at.key, seq: at.seq, text: m.delta, streaming: true });
  },
  context_compacted: (f, m, at) => {
    f.closeAgent();
    f.info.context = { estimated: m.tokens_after, window: f.info.model?.context_window ?? f.info.context?.window ?? null };
    f.notice(
      at.seq,
      at.key,
      'info',
      `── context compacted (${m.reason}): ${formatCount(m.tokens_before)} → ${formatCount(m.tokens_after)} tokens · ${m.items_before} → ${m.items_after} items`,
      m.summary,
    );
  },
  agent_message_delta: (f, m, at) => {
    f.closeReasoning();
    if (f.fold.openAgent === null) {
      f.fold.openAgent = f.add({ kind: 'agent', key: at.key, seq: at.seq, text: m.delta, streaming: true });
    } else {
      f.edit<'agent'>(f.fold.openAgent).text += m.delta;
    }
  },
  agent_message: (f, m, at) => {
    if (f.fold.openAgent !== null) {
      const it = f.edit<'agent'>(f.fold.openAgent);
      if (m.text !== '') it.text = m.text;
      it.streaming = false;
      f.fold.openAgent = null;
    } else if (m.text.trim() !== '') {
      f.add({ kind: 'agent', key: at.key, seq: at.seq, text: m.text, streaming: false });
    }
  },
  tool_call_begin: (f, m, at) => {
    f.closeAgent();
    const it = f.tool(at.seq, at.key, m.call_id, m.tool, m.arguments);
    it.tool = m.tool;
    it.args = m.arguments;
  },
  exec_output_delta: (f, m, at) => {
    const it = f.tool(at.seq, at.key, m.call_id, 'shell', undefined);
    appendOutput(it, m.stream, m.chunk);
  },
  tool_call_end: (f, m, at) => {
    const it = f.tool(at.seq, at.key, m.call_id, 'tool', undefined);
    it.status = m.status;
    it.exitCode = m.exit_code ?? null;
    it.durationMs = m.duration_ms;
    if (it.output.length === 0 && it.truncated === 0 && m.output !== '') appendOutput(it, 'stdout', m.output);
    if (it.approval === 'pending') it.approval = null;
    delete f.fold.tools[m.call_id];
  },
  exec_approval_request: (f, m, at) => {
    f.closeAgent();
    const it = f.tool(at.seq, at.key, m.call_id, m.tool, m.arguments);
    it.status = 'awaiting_approval';
    it.approval = 'pending';
    it.cwd = m.cwd;
    if (it.args === undefined) it.args = m.arguments;
    f.fold.approvals[m.approval_id] = m.call_id;
    f.info.pendingApproval = m;
  },
  approval_resolved: (f, m) => {
    const callId = f.fold.approvals[m.approval_id] ?? f.info.pendingApproval?.call_id;
    const idx = callId !== undefined ? f.fold.tools[callId] : undefined;
    if (idx !== undefined) {
      const it = f.edit<'tool'>(idx);
      it.approval = m.decision;
      if (it.status === 'awaiting_approval') {
        it.status = m.decision === 'deny' ? 'denied' : m.decision === 'abort' ? 'interrupted' : 'running';
      }
    }
    if (f.info.pendingApproval?.approval_id === m.approval_id) f.info.pendingApproval = null;
    delete f.fold.approvals[m.approval_id];
  },
  token_usage: (f, m) => {
    f.info.usage = m.total;
    // The next call sends about what this one did plus its reply.
    f.info.context = { estimated: m.usage.input_tokens + m.usage.output_tokens, window: f.info.model?.context_window ?? f.info.context?.window ?? null };
  },
  turn_resumed: (f, m, at) => {
    // A reply cut off by the restart stays as it was; the resumed step starts a new one.
    f.closeAgent();
    f.info.activeTurnId = at.ev.turn_id ?? f.info.activeTurnId;
    f.notice(at.seq, at.key, 'warning', `turn resumed after a daemon restart or takeover (attempt ${m.attempt})`);
  },
  turn_complete: (f, m, at) => {
    f.finishTurn(at.ev.turn_id, at.seq, at.key, 'complete', null, {
      durationMs: m.duration_ms,
      modelCalls: m.model_calls,
      toolCalls: m.tool_calls,
      tokens: m.usage.input_tokens + m.usage.output_tokens,
    });
  },
  turn_interrupted: (f, m, at) => {
    f.finishTurn(at.ev.turn_id, at.seq, at.key, 'interrupted', m.reason);
  },
  turn_failed: (f, m, at) => {
    f.finishTurn(at.ev.turn_id, at.seq, at.key, 'failed', `${m.error.code}: ${m.error.message}`);
  },
  model_changed: (f, m, at) => {
    f.info.model = {
      route: m.route,
      model: m.model,
      reasoning_effort: m.reasoning_effort,
      context_window: m.context_window,
    };
    if (f.info.context) f.info.context = { ...f.info.context, window: m.context_window };
    f.notice(
      at.seq,
      at.key,
      'info',
      `model → ${m.route}`,
      [m.model !== m.route ? m.model : '', m.reasoning_effort ? `effort ${m.reasoning_effort}` : '']
        .filter(Boolean)
        .join(' · ') || undefined,
    );
  },
  warning: (f, m, at) => {
    f.notice(at.seq, at.key, 'warning', m.message);
  },
  session_resume_requested: (f, m, at) => {
    f.notice(at.seq, at.key, 'info', `resume requested from session ${m.session_id}`);
  },
  capability_output: (f, m, at) => {
    const detail = m.capability === 'session' && m.command === 'tools' ? toolsTable(m.output) : null;
    f.notice(
      at.seq,
      at.key,
      'info',
      `${m.capability} ${m.command}`,
      detail ?? (typeof m.output === 'string' ? m.output : JSON.stringify(m.output, null, 2)),
    );
  },
  subagent_started: (f, m, at) => {
    const it = f.tool(at.seq, at.key, m.call_id, 'delegate', undefined);
    it.subagent = { sessionId: m.child_session_id, status: 'running', progress: it.subagent?.progress ?? null };
  },
  subagent_finished: (f, m, at) => {
    const it = f.tool(at.seq, at.key, m.call_id, 'delegate', undefined);
    it.subagent = { sessionId: m.child_session_id, status: m.status, progress: it.subagent?.progress ?? null };
  },
};

/** `session tools` output as rows: name, source (server), approval; then each MCP server's state. */
function toolsTable(output: unknown): string | null {
  const o = output as { tools?: unknown; mcp_servers?: unknown } | null;
  if (!o || !Array.isArray(o.tools)) return null;
  const rows = (o.tools as Array<Record<string, unknown>>).map((t) => {
    const source = t.source === 'mcp' ? `mcp:${String(t.server)}` : String(t.source);
    return `${String(t.name).padEnd(32)} ${source.padEnd(16)} ${String(t.status)}${t.approval ? ` · approval ${String(t.approval)}` : ''}`;
  });
  const servers = Array.isArray(o.mcp_servers) ? (o.mcp_servers as Array<Record<string, unknown>>) : [];
  for (const s of servers) {
    const error = typeof s.error === 'string' ? ` — ${s.error}` : '';
    rows.push(`server ${String(s.server)} (${String(s.transport)}): ${String(s.state)}${error}`);
  }
  return rows.join('\n');
}

/** Fold one event of batch `seq`; `key` names the item it may add. */
function foldEvent(f: Folder, seq: number, key: string, ev: Event): void {
  // Own properties only: an unknown type from a leniently parsed frame may be `toString`.
  const type = ev.msg.type;
  const handler = Object.hasOwn(ON_EVENT, type) ? (ON_EVENT[type] as Handler<EventMsg['type']>) : undefined;
  if (handler) handler(f, ev.msg, { seq, key, ev });
  else f.notice(seq, key, 'info', `event ${String((ev.msg as { type?: unknown }).type)}`);
}

/** Fold every event of a batch. */
export function foldBatch(f: Folder, b: BatchFrame): void {
  b.events.forEach((ev, i) => foldEvent(f, b.sequence, `${b.sequence}.${i}`, ev));
}
