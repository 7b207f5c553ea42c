/**
 * The TUI's model, outside React: owns the transcript of the attached session, the
 * connection state and the local notes, and turns user actions into protocol calls.
 * Ink components read it with useSyncExternalStore (subscribe/getState).
 */
import { LIMITS, type ApprovalDecision, type BatchFrame, type ExecApprovalRequestMsg, type MessageMode, type MessageOp } from '../../protocol/index.js';
import type { AgentdClient } from '../client/client.js';
import type { ClientState } from '../client/events.js';
import { newSubmissionId } from '../client/client.js';
import { describeError } from '../client/errors.js';
import type { LocalNote } from './items.js';
import { formatCount, relativeTime } from '../render/format.js';
import { sanitizeLine } from '../render/sanitize.js';
import { childApproval, childProgress, runningChildren, withChildProgress, type ChildView } from './subagents.js';
import {
  applyBatches,
  emptyTranscript,
  withDescriptor,
  type TranscriptState,
} from './transcript.js';

/** The parts of AgentdClient the TUI uses (tests pass a fake). */
export type TuiClient = Pick<
  AgentdClient,
  'events' | 'currentState' | 'attach' | 'detach' | 'createSession' | 'listSessions' | 'history' | 'submit' | 'reconnectNow'
> &
  Partial<Pick<AgentdClient, 'listModels'>>;

export interface ViewState {
  sessionId: string | null;
  transcript: TranscriptState;
  notes: LocalNote[];
  conn: ClientState;
  /** Cursor for the next older history page; null when the start is loaded. */
  nextBeforeSequence: number | null;
  loadingHistory: boolean;
  /** The approval id already answered from this UI (hide the prompt until resolved). */
  answeredApproval: string | null;
  /** An interrupt was sent for this turn. */
  interruptingTurn: string | null;
  /** Subagents of running delegate calls, followed (attached) from this view, by session id. */
  children: Record<string, ChildView>;
  /** Finished thinking is shown whole (`/thinking` toggles), else collapsed to a row. */
  showReasoning: boolean;
}

export const HISTORY_PAGE = LIMITS.historyDefault;

/** The approval the user is asked now: pending and not yet answered from this UI (the session's own, else a subagent's). */
export function askedApproval(view: ViewState): ExecApprovalRequestMsg | null {
  return approvalTarget(view)?.request ?? null;
}

/** Which session the asked approval belongs to: this one or a followed subagent. */
export function approvalTarget(view: ViewState): { sessionId: string; request: ExecApprovalRequestMsg; child: boolean } | null {
  const pending = view.transcript.info.pendingApproval;
  if (pending !== null && view.answeredApproval !== pending.approval_id && view.sessionId) {
    return { sessionId: view.sessionId, request: pending, child: false };
  }
  const child = childApproval(view.children);
  return child ? { ...child, child: true } : null;
}
/** Coalesce batches arriving within this many ms into one render. */
const FLUSH_MS = 16;

/** The view of a session before anything of it is loaded. */
function freshSession(sessionId: string | null): Omit<ViewState, 'conn'> {
  return {
    sessionId,
    transcript: emptyTranscript(sessionId),
    notes: [],
    nextBeforeSequence: null,
    loadingHistory: false,
    answeredApproval: null,
    interruptingTurn: null,
    children: {},
    showReasoning: false,
  };
}

export class TuiController {
  private state: ViewState;
  private readonly listeners = new Set<() => void>();
  private pending: BatchFrame[] = [];
  private flushTimer: NodeJS.Timeout | undefined;
  private noteSeq = 0;
  private readonly unsubs: (() => void)[] = [];
  private wasConnected: boolean;
  /** The address of the last connection, and a new one moved to since (named once resumed). */
  private lastUrl: string | null = null;
  private movedTo: string | null = null;

  constructor(private readonly client: TuiClient) {
    this.state = { ...freshSession(null), conn: client.currentState };
    this.wasConnected = client.currentState.kind === 'connected';
    if (client.currentState.kind === 'connected') this.lastUrl = client.currentState.url ?? null;
    this.unsubs.push(
      client.events.on('batch', (b) => {
        if (Object.hasOwn(this.state.children, b.session_id)) return this.childBatch(b);
        if (b.session_id !== this.state.sessionId) return;
        this.pending.push(b);
        this.flushTimer ??= setTimeout(() => this.flush(), FLUSH_MS);
      }),
      client.events.on('attached', (a, { resumed }) => {
        const child = this.state.children[a.session.session_id];
        if (child) {
          this.setChild(a.session.session_id, { ...child, transcript: withDescriptor(child.transcript, a.session) });
          return;
        }
        if (a.session.session_id !== this.state.sessionId) return;
        this.flush();
        this.set({ transcript: withDescriptor(this.state.transcript, a.session) });
        if (resumed) this.note('success', this.movedTo ? `reconnected to ${this.movedTo}` : 'reconnected');
        this.movedTo = null;
      }),
      client.events.on('state', (s) => {
        if (s.kind === 'reconnecting' && this.wasConnected) {
          this.note('warning', `connection lost (${s.error}) — reconnecting…`);
        }
        if (s.kind === 'closed' && s.error) this.note('error', `disconnected: ${s.error}`);
        if (s.kind === 'connected' && s.url) {
          // Another address than before (a failover to another node): the resumed note names it.
          if (this.lastUrl !== null && s.url !== this.lastUrl) this.movedTo = s.url;
          this.lastUrl = s.url;
        }
        this.wasConnected = s.kind === 'connected';
        this.set({ conn: s });
      }),
      client.events.on('error', (e) => {
        this.note('error', `${e.code}: ${e.message}`);
      }),
    );
  }

  // ---- store ----

  getState = (): ViewState => this.state;

  subscribe = (listener: () => void): (() => void) => {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  };

  private set(patch: Partial<ViewState>): void {
    this.state = { ...this.state, ...patch };
    for (const l of [...this.listeners]) l();
  }

  /** Apply buffered batches now. */
  flush(): void {
    clearTimeout(this.flushTimer);
    this.flushTimer = undefined;
    if (this.pending.length === 0) return;
    const batches = this.pending;
    this.pending = [];
    const transcript = applyBatches(this.state.transcript, batches);
    const patch: Partial<ViewState> = { transcript };
    const pa = transcript.info.pendingApproval;
    if (this.state.answeredApproval && pa?.approval_id !== this.state.answeredApproval) patch.answeredApproval = null;
    if (this.state.interruptingTurn && transcript.info.activeTurnId !== this.state.interruptingTurn) {
      patch.interruptingTurn = null;
    }
    this.set(patch);
    this.followChildren();
  }

  // ---- subagents ----

  /** Attach to the children of running delegate calls; detach from those that finished. */
  private followChildren(): void {
    const running = new Set(runningChildren(this.state.transcript));
    const children = { ...this.state.children };
    let changed = false;
    for (const id of running) {
      if (children[id]) continue;
      children[id] = { transcript: emptyTranscript(id), answeredApproval: null };
      changed = true;
      this.client.attach(id, { replayBatches: HISTORY_PAGE }).catch((err: unknown) => this.note('error', `could not follow subagent ${id}: ${describeError(err)}`));
    }
    for (const id of Object.keys(children)) {
      if (running.has(id)) continue;
      delete children[id];
      changed = true;
      void this.client.detach(id).catch(() => {});
    }
    if (changed) this.set({ children });
  }

  private childBatch(b: BatchFrame): void {
    const child = this.state.children[b.session_id]!;
    const transcript = applyBatches(child.transcript, [b]);
    const pending = transcript.info.pendingApproval;
    const answeredApproval = child.answeredApproval && pending?.approval_id === child.answeredApproval ? child.answeredApproval : null;
    this.setChild(b.session_id, { transcript, answeredApproval });
  }

  private setChild(id: string, child: ChildView): void {
    const parent = withChildProgress(this.state.transcript, id, childProgress(child.transcript));
    this.set({ children: { ...this.state.children, [id]: child }, transcript: parent });
  }

  private detachChildren(): void {
    for (const id of Object.keys(this.state.children)) void this.client.detach(id).catch(() => {});
  }

  /** Add a local note to the transcript (not journaled). */
  note(tone: LocalNote['tone'], text: string, detail?: string): void {
    const n: LocalNote = { key: `note-${++this.noteSeq}`, afterSeq: this.state.transcript.lastSeq ?? 0, tone, text };
    if (detail !== undefined) n.detail = detail;
    this.set({ notes: [...this.state.notes, n] });
  }

  dispose(): void {
    clearTimeout(this.flushTimer);
    for (const u of this.unsubs) u();
    this.listeners.clear();
  }

  // ---- sessions ----

  /** Attach to a session (detaching from the current one), replaying its recent history. */
  async open(sessionId: string): Promise<void> {
    const previous = this.state.sessionId;
    if (previous && previous !== sessionId) void this.client.detach(previous);
    this.detachChildren();
    this.pending = [];
    this.set(freshSession(sessionId));
    // The descriptor is applied by the 'attached' listener, before the replayed batches.
    const attached = await this.client.attach(sessionId, { replayBatches: HISTORY_PAGE });
    if (this.state.sessionId === sessionId) this.set({ nextBeforeSequence: attached.next_before_sequence });
  }

  /** Create a session and attach to it. */
  async newSession(): Promise<void> {
    try {
      const d = await this.client.createSession({});
      await this.open(d.session_id);
    } catch (err) {
      this.note('error', `could not create a session: ${describeError(err)}`);
    }
  }

  async switchTo(sessionId: string): Promise<void> {
    if (sessionId === this.state.sessionId) {
      this.note('info', `already attached to ${sessionId}`);
      return;
    }
    try {
      await this.open(sessionId);
    } catch (err) {
      this.note('error', `could not attach to ${sessionId}: ${describeError(err)}`);
    }
  }

  /** Show the session list as a note. */
  async listSessions(): Promise<void> {
    try {
      const { sessions } = await this.client.listSessions({ limit: 20, include_children: true });
      if (sessions.length === 0) {
        this.note('info', 'no sessions');
        return;
      }
      const rows = [...sessions]
        .sort((a, b) => b.updated_at - a.updated_at)
        .map((s) => {
          const mark = s.session_id === this.state.sessionId ? '*' : ' ';
          const title = s.title ? `  ${sanitizeLine(s.title)}` : '';
          const parent = s.parent_session_id ? `  ↳ subagent of ${s.parent_session_id}` : '';
          return `${mark} ${s.session_id.padEnd(24)} ${s.status.padEnd(17)} ${s.model.route.padEnd(10)} ${relativeTime(s.updated_at)}${title}${parent}`;
        });
      this.note('info', `${sessions.length} session${sessions.length === 1 ? '' : 's'} — /attach ID to switch`, rows.join('\n'));
    } catch (err) {
      this.note('error', `could not list sessions: ${describeError(err)}`);
    }
  }

  /** Load the next older page of history (PageUp at the top). */
  async loadOlder(): Promise<void> {
    const { sessionId, nextBeforeSequence, loadingHistory } = this.state;
    if (!sessionId || nextBeforeSequence === null || loadingHistory) return;
    this.set({ loadingHistory: true });
    try {
      const h = await this.client.history(sessionId, nextBeforeSequence, HISTORY_PAGE);
      if (this.state.sessionId !== sessionId) return;
      this.set({
        transcript: applyBatches(this.state.transcript, h.batches),
        nextBeforeSequence: h.next_before_sequence,
        loadingHistory: false,
      });
    } catch (err) {
      this.set({ loadingHistory: false });
      this.note('error', `could not load history: ${describeError(err)}`);
    }
  }

  // ---- submissions ----

  /** Send a message; false (with a note) when it could not be queued. */
  async sendMessage(text: string, mode?: MessageMode): Promise<boolean> {
    const sessionId = this.state.sessionId;
    if (!sessionId) return false;
    const op: MessageOp = { type: 'message', text };
    if (mode) op.mode = mode;
    try {
      await this.client.submit(sessionId, { id: newSubmissionId('tui'), op });
      return true;
    } catch (err) {
      this.note('error', `message not sent: ${describeError(err)}`);
      return false;
    }
  }

  /** Interrupt the running turn (Esc). */
  async interrupt(): Promise<void> {
    const { sessionId, transcript, interruptingTurn } = this.state;
    const turnId = transcript.info.activeTurnId;
    if (!sessionId || !turnId || interruptingTurn === turnId) return;
    this.set({ interruptingTurn: turnId });
    try {
      await this.client.submit(sessionId, { id: newSubmissionId('tui'), op: { type: 'interrupt', turn_id: turnId } });
    } catch (err) {
      this.set({ interruptingTurn: null });
      this.note('error', `interrupt failed: ${describeError(err)}`);
    }
  }

  /** Answer the pending approval: this session's, else a followed subagent's (on the child session). */
  async answerApproval(decision: ApprovalDecision): Promise<void> {
    const target = approvalTarget(this.state);
    if (!target) return;
    const { sessionId, request: req } = target;
    const mark = (answered: string | null) => {
      const child = this.state.children[sessionId];
      if (!target.child) this.set({ answeredApproval: answered });
      else if (child) this.set({ children: { ...this.state.children, [sessionId]: { ...child, answeredApproval: answered } } });
    };
    mark(req.approval_id);
    try {
      await this.client.submit(sessionId, {
        id: newSubmissionId('tui'),
        op: { type: 'exec_approval', id: req.approval_id, decision },
      });
    } catch (err) {
      mark(null);
      this.note('error', `approval not sent: ${describeError(err)}`);
    }
  }

  /** `/tools`: ask the session for its tools (`session tools`); the answer shows in the transcript. */
  async tools(): Promise<void> {
    const sessionId = this.state.sessionId;
    if (!sessionId) return;
    try {
      await this.client.submit(sessionId, { id: newSubmissionId('tui'), op: { type: 'capability_command', capability: 'session', command: 'tools' } });
    } catch (err) {
      this.note('error', `could not list tools: ${describeError(err)}`);
    }
  }

  async setModel(route: string, effort?: string): Promise<void> {
    const sessionId = this.state.sessionId;
    if (!sessionId) return;
    const op: { type: 'set_model'; route: string; reasoning_effort?: string } = { type: 'set_model', route };
    if (effort) op.reasoning_effort = effort;
    try {
      await this.client.submit(sessionId, { id: newSubmissionId('tui'), op });
    } catch (err) {
      this.note('error', `could not switch model: ${describeError(err)}`);
    }
  }

  reconnectNow(): void {
    this.client.reconnectNow();
  }

  // ---- context (docs/context.md) ----

  /** `/model` alone: the routes to pick from, with their windows and efforts. */
  async listModels(): Promise<void> {
    if (!this.client.listModels) {
      this.note('error', 'this client cannot list models');
      return;
    }
    try {
      const { routes, default: def } = await this.client.listModels();
      const current = this.state.transcript.info.model?.route;
      const rows = routes.map((r) => {
        const mark = r.route === current ? '*' : ' ';
        const window = r.context_window ? `${formatCount(r.context_window)} ctx` : 'no window';
        const efforts = r.reasoning_efforts.length > 0 ? `efforts: ${r.reasoning_efforts.join(', ')}` : '';
        return `${mark} ${sanitizeLine(r.route).padEnd(16)} ${sanitizeLine(`${r.provider}/${r.model}`).padEnd(28)} ${window.padEnd(10)} ${sanitizeLine(efforts)}${r.route === def ? '  (default)' : ''}`;
      });
      this.note('info', `${routes.length} model route${routes.length === 1 ? '' : 's'} — /model ROUTE [EFFORT] to switch`, rows.join('\n'));
    } catch (err) {
      this.note('error', `could not list models: ${describeError(err)}`);
    }
  }

  /** `/compact`: summarize the conversation (a turn of its own when idle, else before the next model call). */
  async compact(): Promise<void> {
    const sessionId = this.state.sessionId;
    if (!sessionId) return;
    try {
      await this.client.submit(sessionId, { id: newSubmissionId('tui'), op: { type: 'capability_command', capability: 'session', command: 'compact' } });
    } catch (err) {
      this.note('error', `could not compact: ${describeError(err)}`);
    }
  }

  /** `/thinking`: show finished thinking whole, or collapse it again. */
  toggleReasoning(): void {
    this.set({ showReasoning: !this.state.showReasoning });
  }
}
