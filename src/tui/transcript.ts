/**
 * The transcript reducer: committed journal batches → display items and the session's
 * live status (model, running turn, pending approval, token usage). Pure and immutable:
 * every function returns a new state. Batches are deduplicated by sequence, and batches
 * older than what is loaded (history pages) are merged in order.
 */
import type {
  ApprovalDecision,
  BatchFrame,
  Event,
  ExecApprovalRequestMsg,
  ModelInfo,
  SessionDescriptor,
  TokenUsage,
} from '../../protocol/index.js';

export type ToolStatus = 'awaiting_approval' | 'running' | 'ok' | 'error' | 'denied' | 'interrupted';

export interface OutputChunk {
  stream: 'stdout' | 'stderr';
  text: string;
}

export type Item =
  | { kind: 'user'; key: string; seq: number; text: string; mode: 'turn' | 'queued' | 'steer' }
  | { kind: 'agent'; key: string; seq: number; text: string; streaming: boolean }
  | {
      kind: 'tool';
      key: string;
      seq: number;
      callId: string;
      tool: string;
      args: unknown;
      output: OutputChunk[];
      /** Characters dropped from the front of a very long output. */
      truncated: number;
      status: ToolStatus;
      exitCode: number | null;
      durationMs: number | null;
      /** The approval decision, if the call asked for one. */
      approval: ApprovalDecision | 'pending' | null;
      cwd: string | null;
    }
  | {
      kind: 'turn_end';
      key: string;
      seq: number;
      outcome: 'complete' | 'interrupted' | 'failed';
      reason: string | null;
      durationMs: number | null;
      modelCalls: number | null;
      toolCalls: number | null;
      tokens: number | null;
    }
  | { kind: 'notice'; key: string; seq: number; tone: NoticeTone; text: string; detail?: string };

export type NoticeTone = 'info' | 'success' | 'warning' | 'error';
export type ItemKind = Item['kind'];
export type ToolItem = Extract<Item, { kind: 'tool' }>;

export type SessionStatus = 'idle' | 'running' | 'awaiting_approval';

export interface SessionInfo {
  sessionId: string | null;
  title: string | null;
  model: ModelInfo | null;
  cwd: string | null;
  approvalPolicy: string | null;
  activeTurnId: string | null;
  /** ts of the running turn's turn_started event, if seen. */
  turnStartedAt: number | null;
  pendingApproval: ExecApprovalRequestMsg | null;
  /** Session token totals, from the last token_usage event. */
  usage: TokenUsage | null;
}

interface Fold {
  /** Index of the agent item receiving deltas, if any. */
  openAgent: number | null;
  /** call_id → item index. */
  tools: Record<string, number>;
  /** approval_id → call_id. */
  approvals: Record<string, string>;
}

export interface TranscriptState {
  items: Item[];
  /** Every batch applied, ascending by sequence. */
  batches: BatchFrame[];
  firstSeq: number | null;
  lastSeq: number | null;
  info: SessionInfo;
  fold: Fold;
  /** Bumped whenever older batches were merged in front (the view keeps its anchor). */
  prepends: number;
}

/** Output kept per tool call (the tail); older text is counted in `truncated`. */
export const MAX_TOOL_OUTPUT_CHARS = 64 * 1024;

const emptyInfo = (): SessionInfo => ({
  sessionId: null,
  title: null,
  model: null,
  cwd: null,
  approvalPolicy: null,
  activeTurnId: null,
  turnStartedAt: null,
  pendingApproval: null,
  usage: null,
});

export function emptyTranscript(sessionId: string | null = null): TranscriptState {
  return {
    items: [],
    batches: [],
    firstSeq: null,
    lastSeq: null,
    info: { ...emptyInfo(), sessionId },
    fold: { openAgent: null, tools: {}, approvals: {} },
    prepends: 0,
  };
}

/** Status as the session would report it. */
export function sessionStatus(info: SessionInfo): SessionStatus {
  if (info.pendingApproval) return 'awaiting_approval';
  if (info.activeTurnId) return 'running';
  return 'idle';
}

/** Take the descriptor's view of the session (from `attached` / `session_created`). */
export function withDescriptor(state: TranscriptState, d: SessionDescriptor): TranscriptState {
  const info: SessionInfo = {
    ...state.info,
    sessionId: d.session_id,
    title: d.title,
    model: d.model,
    cwd: d.cwd,
    approvalPolicy: d.approval_policy,
    activeTurnId: d.active_turn_id,
    turnStartedAt: d.active_turn_id && d.active_turn_id === state.info.activeTurnId ? state.info.turnStartedAt : null,
    pendingApproval: d.pending_approval,
  };
  let items = state.items;
  // A pending approval whose request is older than the loaded history still shows on its tool.
  if (d.pending_approval) {
    const idx = state.fold.tools[d.pending_approval.call_id];
    if (idx !== undefined) {
      const it = items[idx] as ToolItem;
      if (it.status !== 'awaiting_approval') {
        items = items.slice();
        items[idx] = { ...it, status: 'awaiting_approval', approval: 'pending', cwd: d.pending_approval.cwd };
      }
    }
  }
  return { ...state, items, info };
}

/**
 * Apply batches (any order, duplicates allowed). Batches newer than everything loaded
 * are folded incrementally; older ones (history pages) cause a re-fold of everything,
 * keeping the newer live status.
 */
export function applyBatches(state: TranscriptState, batches: readonly BatchFrame[]): TranscriptState {
  if (batches.length === 0) return state;
  const known = new Set<number>();
  const fresh: BatchFrame[] = [];
  const have = (seq: number) =>
    state.lastSeq !== null && seq >= (state.firstSeq ?? 0) && seq <= state.lastSeq && hasSeq(state.batches, seq);
  for (const b of batches) {
    if (known.has(b.sequence) || have(b.sequence)) continue;
    known.add(b.sequence);
    fresh.push(b);
  }
  if (fresh.length === 0) return state;
  fresh.sort((a, b) => a.sequence - b.sequence);

  if (state.lastSeq === null || fresh[0]!.sequence > state.lastSeq) {
    const f = new Folder(state.items, state.fold, state.info);
    for (const b of fresh) f.batch(b);
    return {
      ...state,
      items: f.items,
      fold: f.fold,
      info: f.info,
      batches: [...state.batches, ...fresh],
      firstSeq: state.firstSeq ?? fresh[0]!.sequence,
      lastSeq: fresh[fresh.length - 1]!.sequence,
    };
  }

  // Older batches: merge and fold again from scratch.
  const all = mergeSorted(state.batches, fresh);
  const f = new Folder([], { openAgent: null, tools: {}, approvals: {} }, { ...emptyInfo() });
  for (const b of all) f.batch(b);
  const newestFresh = fresh[fresh.length - 1]!.sequence;
  // Live status comes from the newest information; only batches past lastSeq can change it.
  const info = newestFresh > (state.lastSeq ?? 0) ? f.info : { ...f.info, ...pickLive(state.info) };
  let next: TranscriptState = {
    ...state,
    items: f.items,
    fold: f.fold,
    info,
    batches: all,
    firstSeq: all[0]!.sequence,
    lastSeq: all[all.length - 1]!.sequence,
    prepends: state.prepends + (fresh[0]!.sequence < (state.firstSeq ?? Infinity) ? 1 : 0),
  };
  if (info.pendingApproval) {
    next = withPendingMark(next, info.pendingApproval);
  }
  return next;
}

/** Apply one batch. */
export function applyBatch(state: TranscriptState, batch: BatchFrame): TranscriptState {
  return applyBatches(state, [batch]);
}

function pickLive(info: SessionInfo): Partial<SessionInfo> {
  const out: Partial<SessionInfo> = {};
  for (const [k, v] of Object.entries(info) as [keyof SessionInfo, unknown][]) {
    if (v !== null) (out as Record<string, unknown>)[k] = v;
  }
  out.activeTurnId = info.activeTurnId;
  out.pendingApproval = info.pendingApproval;
  out.turnStartedAt = info.turnStartedAt;
  return out;
}

function withPendingMark(state: TranscriptState, req: ExecApprovalRequestMsg): TranscriptState {
  const idx = state.fold.tools[req.call_id];
  if (idx === undefined) return state;
  const it = state.items[idx] as ToolItem;
  if (it.approval === 'pending') return state;
  const items = state.items.slice();
  items[idx] = { ...it, status: 'awaiting_approval', approval: 'pending', cwd: req.cwd };
  return { ...state, items };
}

function hasSeq(batches: readonly BatchFrame[], seq: number): boolean {
  let lo = 0;
  let hi = batches.length - 1;
  while (lo <= hi) {
    const mid = (lo + hi) >> 1;
    const s = batches[mid]!.sequence;
    if (s === seq) return true;
    if (s < seq) lo = mid + 1;
    else hi = mid - 1;
  }
  return false;
}

function mergeSorted(a: readonly BatchFrame[], b: readonly BatchFrame[]): BatchFrame[] {
  const out: BatchFrame[] = [];
  let i = 0;
  let j = 0;
  while (i < a.length || j < b.length) {
    if (j >= b.length || (i < a.length && a[i]!.sequence < b[j]!.sequence)) out.push(a[i++]!);
    else if (i >= a.length || b[j]!.sequence < a[i]!.sequence) out.push(b[j++]!);
    else {
      out.push(a[i++]!);
      j++;
    }
  }
  return out;
}

/** Mutable folding over copies; the public functions wrap it immutably. */
class Folder {
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

  batch(b: BatchFrame): void {
    b.events.forEach((ev, i) => this.event(b.sequence, `${b.sequence}.${i}`, ev));
  }

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
        this.endTurn(ev.turn_id);
        this.add({
          kind: 'turn_end',
          key,
          seq,
          outcome: 'complete',
          reason: null,
          durationMs: m.duration_ms,
          modelCalls: m.model_calls,
          toolCalls: m.tool_calls,
          tokens: m.usage.input_tokens + m.usage.output_tokens,
        });
        return;
      case 'turn_interrupted':
        this.endTurn(ev.turn_id);
        this.add({
          kind: 'turn_end',
          key,
          seq,
          outcome: 'interrupted',
          reason: m.reason,
          durationMs: null,
          modelCalls: null,
          toolCalls: null,
          tokens: null,
        });
        return;
      case 'turn_failed':
        this.endTurn(ev.turn_id);
        this.add({
          kind: 'turn_end',
          key,
          seq,
          outcome: 'failed',
          reason: `${m.error.code}: ${m.error.message}`,
          durationMs: null,
          modelCalls: null,
          toolCalls: null,
          tokens: null,
        });
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

function appendOutput(it: ToolItem, stream: 'stdout' | 'stderr', text: string): void {
  if (text === '') return;
  const last = it.output[it.output.length - 1];
  if (last && last.stream === stream) last.text += text;
  else it.output.push({ stream, text });
  let total = 0;
  for (const c of it.output) total += c.text.length;
  while (total > MAX_TOOL_OUTPUT_CHARS && it.output.length > 0) {
    const head = it.output[0]!;
    const excess = total - MAX_TOOL_OUTPUT_CHARS;
    if (head.text.length <= excess) {
      it.output.shift();
      it.truncated += head.text.length;
      total -= head.text.length;
    } else {
      head.text = head.text.slice(excess);
      it.truncated += excess;
      total -= excess;
    }
  }
}

/** The shell command of a tool call's arguments, or null for other tools. */
export function commandOf(args: unknown): string | null {
  if (typeof args === 'object' && args !== null && typeof (args as { command?: unknown }).command === 'string') {
    return (args as { command: string }).command;
  }
  if (typeof args === 'string') {
    try {
      return commandOf(JSON.parse(args));
    } catch {
      return null;
    }
  }
  return null;
}

/** One-line summary of a tool call: the command for shell, else `path`/compact JSON. */
export function describeCall(tool: string, args: unknown): string {
  const cmd = commandOf(args);
  if (cmd !== null) return cmd;
  if (typeof args === 'object' && args !== null) {
    const a = args as Record<string, unknown>;
    if (typeof a.path === 'string') {
      const extra = typeof a.content === 'string' ? ` (${a.content.length} chars)` : '';
      return `${a.path}${extra}`;
    }
    const json = JSON.stringify(args);
    return json === '{}' ? '' : json;
  }
  if (args === undefined || args === null) return '';
  return typeof args === 'string' ? args : JSON.stringify(args);
}
