/**
 * The page's state and what changes it: the session list (polled for live status), the
 * open session's batches (contiguous, in sequence order — a batch at or below the last
 * applied one is ignored, so a resume never duplicates; a gap re-attaches, so none is
 * ever shown), its folded transcript, submissions not yet admitted (re-sent with the same
 * id after a reconnect) and the model catalog.
 */
import { Folder, lastOutcomeOf, type Folded, type Outcome } from './fold';
import { loadToken, saveToken, showSession } from './hash';
import { Link, RequestError, type LinkStatus } from './link';
import { Notifier, noticeOf, noticeOfChange } from './notify';
import type { BatchFrame, CreateSessionConfig, ModelsFrame, Op, ServerFrame, SessionDescriptor } from './wire';

export interface SessionView {
  id: string;
  descriptor: SessionDescriptor | null;
  batches: BatchFrame[];
  folded: Folded;
  /** Sequence to page further back from, or null when everything is loaded. */
  nextBefore: number | null;
  loading: 'attaching' | 'older' | null;
  error: string | null;
  /** head_sequence when attached: the replay is complete once this batch is here. */
  attachedHead: number;
}

export interface Toast {
  id: number;
  text: string;
}

export interface AppState {
  link: LinkStatus;
  sessions: SessionDescriptor[] | null;
  outcomes: Record<string, Outcome | null>;
  models: ModelsFrame | null;
  view: SessionView | null;
  toasts: Toast[];
}

const REPLAY = 100;
const PAGE = 100;
const POLL_MS = 2000;

let toastId = 1;
const newId = (): string => `web-${Date.now().toString(36)}-${Math.random().toString(36).slice(2, 10)}`;

export class Store {
  state: AppState = { link: { state: 'connecting', attempt: 0 }, sessions: null, outcomes: {}, models: null, view: null, toasts: [] };
  private readonly listeners = new Set<() => void>();
  private folder = new Folder();
  private readonly unadmitted = new Map<string, { session_id: string; op: Op }>();
  private readonly outcomeHeads = new Map<string, number>();
  /** Sessions deleted while this page is open: a list answer already under way must not bring them back. */
  private readonly deleted = new Set<string>();
  private readonly link: Link;
  private poll: ReturnType<typeof setInterval> | undefined;
  readonly notifier = new Notifier((id) => this.select(id));

  constructor(url: string, initialSession: string | null) {
    this.link = new Link(url, loadToken, {
      status: (s) => this.set({ link: s }),
      ready: () => this.onReady(),
      frame: (f) => this.onFrame(f),
    });
    if (initialSession) this.state.view = this.emptyView(initialSession);
  }

  subscribe(fn: () => void): () => void {
    this.listeners.add(fn);
    return () => this.listeners.delete(fn);
  }

  private set(patch: Partial<AppState>): void {
    this.state = { ...this.state, ...patch };
    for (const fn of this.listeners) fn();
  }

  private touchView(patch: Partial<SessionView> = {}): void {
    if (this.state.view) this.set({ view: { ...this.state.view, ...patch, folded: this.folder.state } });
  }

  start(): void {
    this.link.start();
    this.poll = setInterval(() => {
      if (this.link.isOpen) void this.refreshSessions();
    }, POLL_MS);
  }

  useToken(token: string): void {
    saveToken(token);
    this.link.retry();
  }

  toast(text: string): void {
    const t = { id: toastId++, text };
    this.set({ toasts: [...this.state.toasts, t] });
    setTimeout(() => this.set({ toasts: this.state.toasts.filter((x) => x.id !== t.id) }), 6000);
  }

  private emptyView(id: string): SessionView {
    this.folder = new Folder();
    return { id, descriptor: null, batches: [], folded: this.folder.state, nextBefore: null, loading: 'attaching', error: null, attachedHead: 0 };
  }

  // ---------- connection ----------

  private onReady(): void {
    void this.link.request({ type: 'list_models' }, 'models').then((m) => this.set({ models: m }), () => undefined);
    void this.refreshSessions();
    const view = this.state.view;
    if (view) void this.attach(view.id, view.batches.length > 0 ? view.batches[view.batches.length - 1]!.sequence : undefined);
    for (const [id, s] of this.unadmitted) this.link.send({ type: 'submit', session_id: s.session_id, submission: { id, op: s.op } });
  }

  private async refreshSessions(): Promise<void> {
    try {
      const page = await this.link.request({ type: 'list_sessions', limit: 200 }, 'sessions');
      // Sessions not open here: an approval or a finished turn seen in their status.
      const before = new Map((this.state.sessions ?? []).map((s) => [s.session_id, s]));
      for (const s of page.sessions) if (s.session_id !== this.state.view?.id) this.notifier.show(noticeOfChange(before.get(s.session_id), s));
      this.set({ sessions: page.sessions.filter((s) => !this.deleted.has(s.session_id)) });
      // The outcome of the 50 most recent (one small history read each, only when their head moved).
      for (const s of page.sessions.slice(0, 50)) void this.refreshOutcome(s);
    } catch {
      // reconnecting: the next welcome lists them again
    }
  }

  /** The sidebar's "last turn" of a session not open here: its last few batches. */
  private async refreshOutcome(s: SessionDescriptor): Promise<void> {
    if (s.head_sequence === 0 || this.outcomeHeads.get(s.session_id) === s.head_sequence) return;
    this.outcomeHeads.set(s.session_id, s.head_sequence);
    try {
      const h = await this.link.request({ type: 'history', session_id: s.session_id, before_sequence: s.head_sequence + 1, limit: 4 }, 'history');
      const outcome = lastOutcomeOf(h.batches);
      if (outcome || !(s.session_id in this.state.outcomes)) this.set({ outcomes: { ...this.state.outcomes, [s.session_id]: outcome } });
    } catch {
      this.outcomeHeads.delete(s.session_id);
    }
  }

  // ---------- sessions ----------

  select(id: string): void {
    const old = this.state.view;
    if (old?.id === id) return;
    if (old && this.link.isOpen) void this.link.request({ type: 'detach', session_id: old.id }, 'detached').catch(() => undefined);
    showSession(id);
    this.set({ view: this.emptyView(id) });
    if (this.link.isOpen) void this.attach(id, undefined);
  }

  async create(config: CreateSessionConfig): Promise<SessionDescriptor> {
    try {
      const created = await this.link.request({ type: 'create_session', config }, 'session_created');
      this.set({ sessions: [created.session, ...(this.state.sessions ?? [])] });
      this.select(created.session.session_id);
      return created.session;
    } catch (err) {
      this.toast(`could not create the session: ${(err as Error).message}`);
      throw err;
    }
  }

  private async attach(id: string, after: number | undefined): Promise<void> {
    try {
      const frame = after === undefined
        ? { type: 'attach' as const, session_id: id, replay_batches: REPLAY }
        : { type: 'attach' as const, session_id: id, after_sequence: after };
      const a = await this.link.request(frame, 'attached');
      if (this.state.view?.id !== id) return;
      if (after === undefined) {
        this.folder = new Folder(a.session);
        this.touchView({ descriptor: a.session, nextBefore: a.next_before_sequence, loading: null, error: null, batches: [], attachedHead: a.head_sequence });
      } else {
        this.touchView({ descriptor: a.session, loading: null, error: null, attachedHead: a.head_sequence });
      }
    } catch (err) {
      if (this.state.view?.id !== id || (err instanceof RequestError && err.code === 'disconnected')) return;
      this.touchView({ loading: null, error: err instanceof RequestError && err.code === 'unknown_session' ? `There is no session ${id}.` : (err as Error).message });
    }
  }

  /** Load the page of batches before the oldest loaded one and re-fold. */
  async loadOlder(): Promise<void> {
    const view = this.state.view;
    if (!view || view.loading || view.nextBefore === null || !this.link.isOpen) return;
    this.touchView({ loading: 'older' });
    try {
      const h = await this.link.request({ type: 'history', session_id: view.id, before_sequence: view.nextBefore, limit: PAGE }, 'history');
      const cur = this.state.view;
      if (cur?.id !== view.id) return;
      const oldest = cur.batches[0]?.sequence ?? Infinity;
      const batches = [...h.batches.filter((b) => b.sequence < oldest), ...cur.batches];
      this.folder = new Folder(cur.descriptor);
      for (const b of batches) this.folder.apply(b);
      this.touchView({ batches, nextBefore: h.next_before_sequence, loading: null });
    } catch (err) {
      this.touchView({ loading: null });
      if (!(err instanceof RequestError && err.code === 'disconnected')) this.toast(`could not load older history: ${(err as Error).message}`);
    }
  }

  // ---------- frames ----------

  private onFrame(f: ServerFrame): void {
    switch (f.type) {
      case 'batch':
        return this.onBatch(f);
      case 'admitted':
        this.unadmitted.delete(f.submission_id);
        return;
      case 'session_deleted':
        this.onDeleted(f.session_id, f.deleted_session_ids);
        return;
      case 'error':
        if (f.submission_id) this.unadmitted.delete(f.submission_id);
        this.toast(`${f.code}: ${f.message}`);
        return;
      default:
        return;
    }
  }

  private onBatch(b: BatchFrame): void {
    const view = this.state.view;
    if (!view || b.session_id !== view.id) return;
    const last = view.batches[view.batches.length - 1]?.sequence;
    if (last !== undefined && b.sequence <= last) return; // already shown
    if (last !== undefined && b.sequence !== last + 1) {
      void this.attach(view.id, last); // never show a gap: ask again from what we have
      return;
    }
    this.folder.apply(b);
    let descriptor = view.descriptor;
    const live = b.sequence > view.attachedHead;
    for (const e of b.events) {
      const m = e.msg;
      if (live) this.notifier.show(noticeOf(view.id, descriptor?.title || view.id, e));
      const title = renamedTo(m);
      if (descriptor && title !== undefined) {
        descriptor = { ...descriptor, title };
        this.patchListed(view.id, { title });
      }
      if (descriptor && m.type === 'model_changed') {
        descriptor = {
          ...descriptor,
          model: { route: m.route, model: m.model, reasoning_effort: m.reasoning_effort, context_window: m.context_window },
          ...(descriptor.context && { context: { ...descriptor.context, context_window: m.context_window } }),
        };
      }
      // The context gauge follows the journal: the last call's input + reply, or a compaction's result.
      if (descriptor?.context && m.type === 'token_usage') {
        descriptor = { ...descriptor, context: { ...descriptor.context, estimated_tokens: m.usage.input_tokens + m.usage.output_tokens } };
      }
      if (descriptor?.context && m.type === 'context_compacted') {
        descriptor = { ...descriptor, context: { ...descriptor.context, estimated_tokens: m.tokens_after } };
      }
    }
    const outcome = this.folder.state.lastOutcome;
    if (outcome && this.state.outcomes[view.id] !== outcome) this.set({ outcomes: { ...this.state.outcomes, [view.id]: outcome } });
    this.touchView({ batches: [...view.batches, b], descriptor });
  }

  // ---------- submissions ----------

  submit(op: Op): boolean {
    const view = this.state.view;
    if (!view) return false;
    return this.submitTo(view.id, op);
  }

  /** Submit to any session (a subagent's approval answered from its parent's view). */
  submitTo(sessionId: string, op: Op): boolean {
    const id = newId();
    if (op.type === 'message') this.unadmitted.set(id, { session_id: sessionId, op });
    const sent = this.link.send({ type: 'submit', session_id: sessionId, submission: { id, op } });
    if (!sent) this.toast(op.type === 'message' ? 'not connected: the message is sent when the page reconnects' : 'not connected: try again once the page has reconnected');
    return sent || op.type === 'message';
  }

  // ---------- titles and deletion ----------

  /** Rename a session (`capability_command session title`); the header and list follow its output. */
  rename(sessionId: string, title: string): boolean {
    return this.submitTo(sessionId, { type: 'capability_command', capability: 'session', command: 'title', arguments: { title } });
  }

  /**
   * Delete a session, its subagent sessions and their journal (`delete_session`). A running
   * or waiting session is refused `busy` unless `force` (which interrupts it first).
   */
  async deleteSession(sessionId: string, force: boolean): Promise<void> {
    const done = await this.link.request({ type: 'delete_session', session_id: sessionId, ...(force && { force: true }) }, 'session_deleted');
    this.onDeleted(sessionId, done.deleted_session_ids);
  }

  /** A session (and its descendants) is gone: drop it from the list, close it if it is open here. */
  private onDeleted(sessionId: string, ids: readonly string[] = []): void {
    for (const id of [sessionId, ...ids]) this.deleted.add(id);
    const sessions = this.state.sessions ?? [];
    const parents = new Map(sessions.map((s) => [s.session_id, s.parent_session_id]));
    // Named by the daemon, or a descendant of one (as far as the list knows).
    const gone = (id: string | null | undefined): boolean => {
      for (let n = 0; id && n < 64; n++, id = parents.get(id)) if (this.deleted.has(id)) return true;
      return false;
    };
    const view = this.state.view;
    const closeView = view !== null && (gone(view.id) || gone(view.descriptor?.parent_session_id));
    this.set({ sessions: this.state.sessions && sessions.filter((s) => !gone(s.session_id)) });
    if (closeView) {
      showSession(null);
      this.set({ view: null });
      this.toast(`Session ${view.descriptor?.title || view.id} was deleted.`);
    }
  }

  private patchListed(sessionId: string, patch: Partial<SessionDescriptor>): void {
    const sessions = this.state.sessions;
    if (sessions?.some((s) => s.session_id === sessionId)) {
      this.set({ sessions: sessions.map((s) => (s.session_id === sessionId ? { ...s, ...patch } : s)) });
    }
  }

  stop(): void {
    clearInterval(this.poll);
  }
}

/** The new title a `capability_output` of `session title` reports, or undefined. */
function renamedTo(m: { type: string }): string | null | undefined {
  if (m.type !== 'capability_output') return undefined;
  const out = m as { capability?: string; command?: string; output?: { title?: unknown } };
  if (out.capability !== 'session' || out.command !== 'title') return undefined;
  const title = out.output?.title;
  return typeof title === 'string' ? title : title === null ? null : undefined;
}

/**
 * The approval a subagent of the open session waits for (`pending_child_approval` of its
 * descriptor, from the polled session list — fresher — or the attach), unless the open
 * session has one of its own.
 */
export function childApprovalOf(state: AppState): NonNullable<SessionDescriptor['pending_child_approval']> | null {
  const view = state.view;
  if (!view || view.folded.pendingApproval || !view.folded.activeTurnId) return null;
  const listed = state.sessions?.find((s) => s.session_id === view.id);
  return (listed ?? view.descriptor)?.pending_child_approval ?? null;
}

/** Status of the open session as its batches tell it. */
export function liveStatus(view: SessionView): SessionDescriptor['status'] {
  if (view.folded.pendingApproval) return 'awaiting_approval';
  return view.folded.activeTurnId ? 'running' : 'idle';
}
