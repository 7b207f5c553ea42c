/**
 * Folding committed batches into transcript items (what the page shows): messages,
 * reasoning, tool calls with their output, turn outcomes and markers. Pure: the same
 * batches always give the same items, so a reconnect or a history page re-folds safely.
 */
import type { BatchFrame, Event, ExecApprovalRequestMsg, SessionDescriptor, TokenUsage } from './wire';

interface Base {
  key: string;
  /** Sequence of the batch that created the item. */
  seq: number;
  turnId: string | null;
  /** Bumped on every change, so a memoized view re-renders only changed items. */
  rev: number;
}

export type Item =
  | (Base & { kind: 'user'; text: string; mode: string })
  | (Base & { kind: 'agent'; text: string; done: boolean })
  | (Base & { kind: 'reasoning'; text: string })
  | (Base & {
      kind: 'tool';
      callId: string;
      tool: string;
      args: unknown;
      output: string;
      status: 'running' | 'waiting' | 'ok' | 'error' | 'denied' | 'interrupted';
      exitCode: number | null;
      decision: string | null;
    })
  | (Base & { kind: 'turn_start'; resumed: number })
  | (Base & { kind: 'turn_end'; outcome: 'complete' | 'interrupted' | 'failed'; detail: string })
  | (Base & { kind: 'note'; tone: 'info' | 'warn'; text: string; sessionLink?: string });

/** The last turn's outcome, as the sidebar shows it. */
export type Outcome = 'complete' | 'interrupted' | 'failed';

/** The folded state of one session's loaded batches. */
export interface Folded {
  items: Item[];
  pendingApproval: ExecApprovalRequestMsg | null;
  activeTurnId: string | null;
  awaitingApproval: boolean;
  lastOutcome: Outcome | null;
  total: TokenUsage | null;
  lastInput: number | null;
}

type AnyMsg = { type: string; [k: string]: unknown };

const str = (v: unknown): string => (typeof v === 'string' ? v : v === undefined || v === null ? '' : JSON.stringify(v));

/** A folder keeps the open items it may still extend (the streaming reply, running tool calls). */
export class Folder {
  readonly state: Folded = {
    items: [],
    pendingApproval: null,
    activeTurnId: null,
    awaitingApproval: false,
    lastOutcome: null,
    total: null,
    lastInput: null,
  };
  private openAgent: Extract<Item, { kind: 'agent' }> | null = null;
  private openReasoning: Extract<Item, { kind: 'reasoning' }> | null = null;
  private readonly tools = new Map<string, Extract<Item, { kind: 'tool' }>>();
  private n = 0;

  /**
   * `seed` is the descriptor from `attach`: the state at the head, for a turn or an
   * approval that began before the oldest loaded batch (later events override it).
   */
  constructor(seed?: SessionDescriptor | null) {
    if (seed) {
      this.state.activeTurnId = seed.active_turn_id;
      this.state.pendingApproval = seed.pending_approval;
      this.state.awaitingApproval = seed.pending_approval !== null;
    }
  }

  /** Apply one batch (batches must come in sequence order). */
  apply(batch: BatchFrame): void {
    batch.events.forEach((e) => this.event(batch.sequence, e));
  }

  private push<K extends Item['kind']>(item: Omit<Extract<Item, { kind: K }>, 'key' | 'rev'> & { kind: K }): Extract<Item, { kind: K }> {
    const full = { ...item, key: `${item.seq}:${this.n++}`, rev: 0 } as unknown as Extract<Item, { kind: K }>;
    this.state.items.push(full);
    return full;
  }

  private touch(item: Item): void {
    item.rev++;
  }

  private tool(seq: number, turnId: string | null, callId: string, tool = 'tool', args: unknown = null) {
    let item = this.tools.get(callId);
    if (!item) {
      item = this.push({
        kind: 'tool', seq, turnId, callId, tool, args, output: '', status: 'running', exitCode: null, decision: null,
      });
      this.tools.set(callId, item);
    }
    return item;
  }

  private closeStreams(): void {
    if (this.openAgent) {
      this.openAgent.done = true;
      this.touch(this.openAgent);
    }
    this.openAgent = null;
    this.openReasoning = null;
  }

  private endTurn(seq: number, turnId: string | null, outcome: Outcome, detail: string): void {
    this.closeStreams();
    for (const t of this.tools.values()) {
      if (t.status === 'running' || t.status === 'waiting') {
        t.status = 'interrupted';
        this.touch(t);
      }
    }
    this.tools.clear();
    this.state.activeTurnId = null;
    this.state.awaitingApproval = false;
    this.state.pendingApproval = null;
    this.state.lastOutcome = outcome;
    this.push({ kind: 'turn_end', seq, turnId, outcome, detail });
  }

  private event(seq: number, e: Event): void {
    const m = e.msg as AnyMsg;
    const turnId = e.turn_id;
    switch (m.type) {
      case 'user_message':
        this.push({ kind: 'user', seq, turnId, text: str(m.text), mode: str(m.mode) });
        return;
      case 'turn_started':
        this.closeStreams();
        this.state.activeTurnId = str(m.turn_id);
        this.push({ kind: 'turn_start', seq, turnId: str(m.turn_id), resumed: 0 });
        return;
      case 'turn_resumed':
        this.state.activeTurnId = turnId;
        this.closeStreams();
        this.push({ kind: 'turn_start', seq, turnId, resumed: Number(m.attempt) || 1 });
        return;
      case 'agent_reasoning_delta':
        if (!this.openReasoning) this.openReasoning = this.push({ kind: 'reasoning', seq, turnId, text: '' });
        this.openReasoning.text += str(m.delta);
        this.touch(this.openReasoning);
        return;
      case 'agent_message_delta':
        this.openReasoning = null;
        if (!this.openAgent) this.openAgent = this.push({ kind: 'agent', seq, turnId, text: '', done: false });
        this.openAgent.text += str(m.delta);
        this.touch(this.openAgent);
        return;
      case 'agent_message': {
        const item = this.openAgent ?? this.push({ kind: 'agent', seq, turnId, text: '', done: true });
        item.text = str(m.text);
        item.done = true;
        this.touch(item);
        this.openAgent = null;
        this.openReasoning = null;
        return;
      }
      case 'tool_call_begin':
        this.closeStreams();
        this.tool(seq, turnId, str(m.call_id), str(m.tool), m.arguments);
        return;
      case 'exec_approval_request': {
        const t = this.tool(seq, turnId, str(m.call_id), str(m.tool), m.arguments);
        t.status = 'waiting';
        this.touch(t);
        this.state.pendingApproval = m as unknown as ExecApprovalRequestMsg;
        this.state.awaitingApproval = true;
        return;
      }
      case 'approval_resolved': {
        const pending = this.state.pendingApproval;
        if (pending && pending.approval_id === m.approval_id) {
          const t = this.tools.get(pending.call_id);
          if (t) {
            t.decision = str(m.decision);
            if (t.status === 'waiting') t.status = 'running';
            this.touch(t);
          }
        }
        if (!pending || pending.approval_id === m.approval_id) {
          this.state.pendingApproval = null;
          this.state.awaitingApproval = false;
        }
        return;
      }
      case 'exec_output_delta': {
        const t = this.tool(seq, turnId, str(m.call_id));
        t.output += str(m.chunk);
        this.touch(t);
        return;
      }
      case 'tool_call_end': {
        const t = this.tool(seq, turnId, str(m.call_id));
        t.status = (str(m.status) || 'ok') as typeof t.status;
        t.exitCode = typeof m.exit_code === 'number' ? m.exit_code : null;
        if (!t.output && typeof m.output === 'string') t.output = m.output;
        this.touch(t);
        this.tools.delete(t.callId);
        return;
      }
      case 'token_usage': {
        const usage = m.usage as TokenUsage | undefined;
        this.state.total = (m.total as TokenUsage | undefined) ?? this.state.total;
        if (usage) this.state.lastInput = usage.input_tokens + usage.output_tokens;
        return;
      }
      case 'turn_complete':
        this.endTurn(seq, turnId, 'complete', '');
        return;
      case 'turn_interrupted':
        this.endTurn(seq, turnId, 'interrupted', str(m.reason));
        return;
      case 'turn_failed': {
        const err = (m.error ?? {}) as { code?: string; message?: string };
        this.endTurn(seq, turnId, 'failed', [err.code, err.message].filter(Boolean).join(': '));
        return;
      }
      case 'model_changed':
        this.push({ kind: 'note', seq, turnId, tone: 'info', text: `model switched to ${str(m.route)} (${str(m.model)}${m.reasoning_effort ? `, ${str(m.reasoning_effort)}` : ''})` });
        return;
      case 'warning':
        this.push({ kind: 'note', seq, turnId, tone: 'warn', text: str(m.message) });
        return;
      case 'capability_output':
        if (m.capability === 'session' && m.command === 'title') {
          const title = (m.output as { title?: unknown } | null)?.title;
          this.push({ kind: 'note', seq, turnId, tone: 'info', text: typeof title === 'string' && title ? `renamed to “${title}”` : 'title cleared' });
          return;
        }
        this.push({ kind: 'note', seq, turnId, tone: 'info', text: `${str(m.capability)} ${str(m.command)}: ${str(m.output)}` });
        return;
      case 'session_resume_requested':
        this.push({ kind: 'note', seq, turnId, tone: 'info', text: `resume requested from session ${str(m.session_id)}`, sessionLink: str(m.session_id) });
        return;
      case 'context_compacted':
        this.closeStreams();
        this.push({
          kind: 'note', seq, turnId, tone: 'info',
          text: `context compacted (${str(m.reason)}): ${str(m.items_before)} → ${str(m.items_after)} items, ${str(m.tokens_before)} → ${str(m.tokens_after)} tokens`,
        });
        return;
      case 'subagent_started':
        this.push({ kind: 'note', seq, turnId, tone: 'info', text: `subagent started: session ${str(m.child_session_id)}`, sessionLink: str(m.child_session_id) });
        return;
      case 'subagent_finished':
        this.push({ kind: 'note', seq, turnId, tone: 'info', text: `subagent ${str(m.status)}: session ${str(m.child_session_id)}`, sessionLink: str(m.child_session_id) });
        return;
      default:
        // session_configured and event types this page does not know: nothing to show.
        return;
    }
  }
}

/** Fold a run of batches (ascending) from scratch. */
export function foldBatches(batches: Iterable<BatchFrame>): Folder {
  const f = new Folder();
  for (const b of batches) f.apply(b);
  return f;
}

/** The outcome of the last finished turn among `batches` (scanning backwards), or null. */
export function lastOutcomeOf(batches: readonly BatchFrame[]): Outcome | null {
  for (let i = batches.length - 1; i >= 0; i--) {
    const events = batches[i]!.events;
    for (let j = events.length - 1; j >= 0; j--) {
      const t = events[j]!.msg.type;
      if (t === 'turn_complete') return 'complete';
      if (t === 'turn_interrupted') return 'interrupted';
      if (t === 'turn_failed') return 'failed';
    }
  }
  return null;
}
