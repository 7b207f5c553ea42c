/**
 * Folding journal events into display items and session info. The folder works on
 * copies and mutates them in place (an item is copied the first time it changes), so
 * the states it started from stay untouched; transcript.ts wraps it immutably.
 */
import type { BatchFrame, Event } from '../../protocol/index.js';
import { appendOutput, type Item, type ItemKind, type NoticeTone, type ToolItem, type TurnEndItem } from './items.js';
import type { SessionInfo } from './session-info.js';

/** What the fold tracks between batches to place the next events. */
export interface Fold {
  /** Index of the agent item receiving deltas, if any. */
  openAgent: number | null;
  /** call_id → item index. */
  tools: Record<string, number>;
  /** approval_id → call_id. */
  approvals: Record<string, string>;
}

export const emptyFold = (): Fold => ({ openAgent: null, tools: {}, approvals: {} });

/** A turn's totals, known when it completes. */
type TurnStats = Pick<TurnEndItem, 'durationMs' | 'modelCalls' | 'toolCalls' | 'tokens'>;

const NO_STATS: TurnStats = { durationMs: null, modelCalls: null, toolCalls: null, tokens: null };

/** Mutable folding over copies of a transcript's items, fold and info. */
export class Folder {
  items: Item[];
  fold: Fold;
  info: SessionInfo;
  /** Item indexes already copied in this fold (safe to mutate). */
  private readonly owned = new Set<number>();

  constructor(items: Item[], fold: Fold, info: SessionInfo) {
    this.items = items.slice();
    this.fold = { openAgent: fold.openAgent, tools: { ...fold.tools }, approvals: { ...fold.approvals } };
    this.info = { ...info };
  }

  private add(item: Item): number {
    this.items.push(item);
    const idx = this.items.length - 1;
    this.owned.add(idx);
    return idx;
  }

  /** A mutable copy of the item at idx. */
  private edit<K extends ItemKind>(idx: number): Extract<Item, { kind: K }> {
    if (!this.owned.has(idx)) {
      const it = this.items[idx]!;
      this.items[idx] = it.kind === 'tool' ? { ...it, output: it.output.map((c) => ({ ...c })) } : { ...it };
      this.owned.add(idx);
    }
    return this.items[idx] as Extract<Item, { kind: K }>;
  }

  private closeAgent(): void {
    if (this.fold.openAgent === null) return;
    const it = this.edit<'agent'>(this.fold.openAgent);
    it.streaming = false;
    this.fold.openAgent = null;
  }

  private notice(seq: number, key: string, tone: NoticeTone, text: string, detail?: string): void {
    const it: Item = { kind: 'notice', key, seq, tone, text };
    if (detail !== undefined) it.detail = detail;
    this.add(it);
  }

  private tool(seq: number, key: string, callId: string, tool: string, args: unknown): ToolItem {
    const idx = this.fold.tools[callId];
    if (idx !== undefined) return this.edit<'tool'>(idx);
    const item: ToolItem = {
      kind: 'tool',
      key,
      seq,
      callId,
      tool,
      args,
      output: [],
      truncated: 0,
      status: 'running',
      exitCode: null,
      durationMs: null,
      approval: null,
      cwd: null,
    };
    this.fold.tools[callId] = this.add(item);
    return item;
  }

  private endTurn(turnId: string | null): void {
    this.closeAgent();
    if (turnId === null || this.info.activeTurnId === turnId || this.info.activeTurnId === null) {
      this.info.activeTurnId = null;
      this.info.turnStartedAt = null;
    }
    if (this.info.pendingApproval) {
      // A turn's end cancels its pending approval.
      const callId = this.info.pendingApproval.call_id;
      const idx = this.fold.tools[callId];
      if (idx !== undefined) {
        const it = this.edit<'tool'>(idx);
        if (it.approval === 'pending') it.approval = null;
        if (it.status === 'awaiting_approval') it.status = 'interrupted';
      }
      this.info.pendingApproval = null;
    }
    // Tool calls still marked running belong to the ended turn.
    for (const idx of Object.values(this.fold.tools)) {
      const it = this.items[idx] as ToolItem;
      if (it.status === 'running' || it.status === 'awaiting_approval') this.edit<'tool'>(idx).status = 'interrupted';
    }
    this.fold.tools = {};
  }

  /** End the turn and add its closing item. */
  private finishTurn(
    turnId: string | null,
    seq: number,
    key: string,
    outcome: TurnEndItem['outcome'],
    reason: string | null,
    stats: TurnStats = NO_STATS,
  ): void {
    this.endTurn(turnId);
    this.add({ kind: 'turn_end', key, seq, outcome, reason, ...stats });
  }

  /** Fold every event of a batch. */
  batch(b: BatchFrame): void {
    b.events.forEach((ev, i) => this.event(b.sequence, `${b.sequence}.${i}`, ev));
  }

  /** Fold one event of batch `seq`; `key` names the item it may add. */
  event(seq: number, key: string, ev: Event): void {
    const m = ev.msg;
    switch (m.type) {
      case 'session_configured':
        this.info.sessionId = m.session_id;
        this.info.model = m.model;
        this.info.cwd = m.cwd;
        this.info.approvalPolicy = m.approval_policy;
        this.info.title = m.title;
        this.notice(seq, key, 'info', `session ${m.session_id}`, `${m.model.route} · ${m.cwd} · approvals: ${m.approval_policy}`);
        return;
      case 'user_message':
        this.closeAgent();
        this.add({ kind: 'user', key, seq, text: m.text, mode: m.mode });
        return;
      case 'turn_started':
        this.closeAgent();
        this.info.activeTurnId = m.turn_id;
        this.info.turnStartedAt = ev.ts;
        return;
      case 'agent_message_delta': {
        if (this.fold.openAgent === null) {
          this.fold.openAgent = this.add({ kind: 'agent', key, seq, text: m.delta, streaming: true });
        } else {
          this.edit<'agent'>(this.fold.openAgent).text += m.delta;
        }
        return;
      }
      case 'agent_message': {
        if (this.fold.openAgent !== null) {
          const it = this.edit<'agent'>(this.fold.openAgent);
          if (m.text !== '') it.text = m.text;
          it.streaming = false;
          this.fold.openAgent = null;
        } else if (m.text.trim() !== '') {
          this.add({ kind: 'agent', key, seq, text: m.text, streaming: false });
        }
        return;
      }
      case 'tool_call_begin': {
        this.closeAgent();
        const it = this.tool(seq, key, m.call_id, m.tool, m.arguments);
        it.tool = m.tool;
        it.args = m.arguments;
        return;
      }
      case 'exec_output_delta': {
        const it = this.tool(seq, key, m.call_id, 'shell', undefined);
        appendOutput(it, m.stream, m.chunk);
        return;
      }
      case 'tool_call_end': {
        const it = this.tool(seq, key, m.call_id, 'tool', undefined);
        it.status = m.status;
        it.exitCode = m.exit_code ?? null;
        it.durationMs = m.duration_ms;
        if (it.output.length === 0 && it.truncated === 0 && m.output !== '') appendOutput(it, 'stdout', m.output);
        if (it.approval === 'pending') it.approval = null;
        delete this.fold.tools[m.call_id];
        return;
      }
      case 'exec_approval_request': {
        this.closeAgent();
        const it = this.tool(seq, key, m.call_id, m.tool, m.arguments);
        it.status = 'awaiting_approval';
        it.approval = 'pending';
        it.cwd = m.cwd;
        if (it.args === undefined) it.args = m.arguments;
        this.fold.approvals[m.approval_id] = m.call_id;
        this.info.pendingApproval = m;
        return;
      }
      case 'approval_resolved': {
        const callId = this.fold.approvals[m.approval_id] ?? this.info.pendingApproval?.call_id;
        const idx = callId !== undefined ? this.fold.tools[callId] : undefined;
        if (idx !== undefined) {
          const it = this.edit<'tool'>(idx);
          it.approval = m.decision;
          if (it.status === 'awaiting_approval') {
            it.status = m.decision === 'deny' ? 'denied' : m.decision === 'abort' ? 'interrupted' : 'running';
          }
        }
        if (this.info.pendingApproval?.approval_id === m.approval_id) this.info.pendingApproval = null;
        delete this.fold.approvals[m.approval_id];
        return;
      }
      case 'token_usage':
        this.info.usage = m.total;
        return;
      case 'turn_resumed':
        // A reply cut off by the restart stays as it was; the resumed step starts a new one.
        this.closeAgent();
        this.info.activeTurnId = ev.turn_id ?? this.info.activeTurnId;
        this.notice(seq, key, 'warning', `turn resumed after a daemon restart (attempt ${m.attempt})`);
        return;
      case 'turn_complete':
        this.finishTurn(ev.turn_id, seq, key, 'complete', null, {
          durationMs: m.duration_ms,
          modelCalls: m.model_calls,
          toolCalls: m.tool_calls,
          tokens: m.usage.input_tokens + m.usage.output_tokens,
        });
        return;
      case 'turn_interrupted':
        this.finishTurn(ev.turn_id, seq, key, 'interrupted', m.reason);
        return;
      case 'turn_failed':
        this.finishTurn(ev.turn_id, seq, key, 'failed', `${m.error.code}: ${m.error.message}`);
        return;
      case 'model_changed':
        this.info.model = {
          route: m.route,
          model: m.model,
          reasoning_effort: m.reasoning_effort,
          context_window: m.context_window,
        };
        this.notice(
          seq,
          key,
          'info',
          `model → ${m.route}`,
          [m.model !== m.route ? m.model : '', m.reasoning_effort ? `effort ${m.reasoning_effort}` : '']
            .filter(Boolean)
            .join(' · ') || undefined,
        );
        return;
      case 'warning':
        this.notice(seq, key, 'warning', m.message);
        return;
      case 'session_resume_requested':
        this.notice(seq, key, 'info', `resume requested from session ${m.session_id}`);
        return;
      case 'capability_output':
        this.notice(
          seq,
          key,
          'info',
          `${m.capability} ${m.command}`,
          typeof m.output === 'string' ? m.output : JSON.stringify(m.output, null, 2),
        );
        return;
      default: {
        const unknown = m as { type?: unknown };
        this.notice(seq, key, 'info', `event ${String(unknown.type)}`);
      }
    }
  }
}
