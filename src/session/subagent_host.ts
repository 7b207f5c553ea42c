/**
 * The host's side of subagents: the `SubagentPort` that `delegate` runs through. It
 * creates a child session once per parent call (its id derived from the parent's session
 * and call ids, so a call run again after a restart finds it), submits the task as the
 * child's first message (the same submission id every time: admitted once), and watches
 * the child's journal for the end of that turn — reading what is already committed, then
 * the live batches. Aborting the wait (the parent was interrupted) interrupts the child's
 * turn. Also answers a parent's `pending_child_approval`.
 */
import { LIMITS, type CreateSessionConfig, type Event, type SessionDescriptor } from '../../protocol/index.js';
import { AgentdError } from '../errors.js';
import type { CommittedBatch } from '../journal/journal.js';
import type { Session } from './session.js';
import type { PendingChildApproval, SessionState } from './state.js';
import { childIds, type SubagentOutcome, type SubagentParent, type SubagentPort, type SubagentRequest, type SubagentStart } from './subagent.js';

/** What the port needs of the host. */
export interface SubagentHostAccess {
  /** Create a child session with this id (the parent fields and depth in its checkpoint). */
  createChild(config: CreateSessionConfig, child: { id: string; parent: { session_id: string; call_id: string }; depth: number }): Promise<SessionDescriptor>;
  /** A hydrated session, or null. */
  open(sessionId: string): Promise<Session | null>;
  /** The session's actor if it is resident now (no hydration). */
  resident(sessionId: string): Session | undefined;
  /** Children of this session that exist now (read once per parent per process). */
  childCount(parentSessionId: string): number;
  /** Whether a session with this id exists in the journal. */
  exists(sessionId: string): Promise<boolean>;
  readAfter(sessionId: string, after: number, limit: number): Promise<CommittedBatch[]>;
  /** The daemon is shutting down: a parent's call stops without ending its child's turn (both recover). */
  closing(): boolean;
}

const PAGE = 256;
const TITLE_CHARS = 60;

/** The child's title: the one asked for or `subagent: TASK`, within the protocol's title limit. */
function childTitle(request: SubagentRequest): string {
  const title = request.title ?? `subagent: ${request.task.trim().slice(0, TITLE_CHARS)}`;
  return [...title].slice(0, LIMITS.titleMaxChars).join('');
}

/** Watches a child's events for the end of the turn its message started. */
class TurnWatch {
  private turnId: string | null = null;
  outcome: SubagentOutcome | null = null;

  constructor(private readonly submissionId: string) {}

  see(events: readonly Event[]): void {
    for (const e of events) {
      if (this.outcome) return;
      const m = e.msg;
      if (m.type === 'turn_started' && e.submission_id === this.submissionId) this.turnId = m.turn_id;
      if (this.turnId === null || e.turn_id !== this.turnId) continue;
      if (m.type === 'turn_complete') this.outcome = { status: 'complete', text: m.last_message ?? '' };
      else if (m.type === 'turn_failed') this.outcome = { status: 'failed', text: `${m.error.code}: ${m.error.message}` };
      else if (m.type === 'turn_interrupted') this.outcome = { status: 'interrupted', text: m.reason };
    }
  }

  get activeTurn(): string | null {
    return this.outcome ? null : this.turnId;
  }
}

/** `limits.max_subagents_per_turn` and `limits.max_children` (docs/tools.md). */
export interface SubagentLimits {
  maxPerTurn: number;
  maxChildren: number;
}

/** Children a parent started: in its current turn, and in all (counted as they are created). */
interface ParentCount {
  turnId: string | null;
  inTurn: number;
  total: number;
}

export class HostSubagents implements SubagentPort {
  private interrupts = 0;
  private readonly counts = new Map<string, ParentCount>();

  constructor(
    private readonly host: SubagentHostAccess,
    private readonly limits: SubagentLimits = { maxPerTurn: 16, maxChildren: 256 },
  ) {}

  /** The limit a new child of `parent` would pass, as a message; else null (and counted). */
  private admitChild(parent: SubagentParent): string | null {
    let count = this.counts.get(parent.session_id);
    if (!count) this.counts.set(parent.session_id, (count = { turnId: parent.turn_id, inTurn: 0, total: this.host.childCount(parent.session_id) }));
    if (count.turnId !== parent.turn_id) Object.assign(count, { turnId: parent.turn_id, inTurn: 0 });
    if (count.inTurn >= this.limits.maxPerTurn) return `at most ${this.limits.maxPerTurn} subagents per turn (limits.max_subagents_per_turn); do the rest yourself`;
    if (count.total >= this.limits.maxChildren) return `at most ${this.limits.maxChildren} subagents per session (limits.max_children); do the task yourself`;
    count.inTurn++;
    count.total++;
    return null;
  }

  /** A parent session left (deleted): forget its counts. */
  forget(sessionId: string): void {
    this.counts.delete(sessionId);
  }

  async start(parent: SubagentParent, request: SubagentRequest): Promise<SubagentStart> {
    const { child_session_id, submission_id } = childIds(parent.session_id, parent.turn_id, parent.call_id);
    try {
      if (!(await this.host.exists(child_session_id))) {
        const refused = this.admitChild(parent);
        if (refused) return { ok: false, message: refused };
        await this.host.createChild(
          {
            model_route: request.route ?? parent.route,
            cwd: parent.cwd,
            approval_policy: parent.approval_policy,
            title: childTitle(request),
            ...(parent.mcp_servers && { mcp_servers: parent.mcp_servers }),
          },
          { id: child_session_id, parent: { session_id: parent.session_id, call_id: parent.call_id }, depth: parent.depth + 1 },
        );
      }
      const child = await this.host.open(child_session_id);
      if (!child) return { ok: false, message: `the child session ${child_session_id} could not be opened` };
      const queued = child.submit({ id: submission_id, op: { type: 'message', text: request.task } });
      if (!queued.ok) return { ok: false, message: `the child session refused the task: ${queued.message}` };
      return { ok: true, child_session_id, submission_id };
    } catch (err) {
      return { ok: false, message: err instanceof AgentdError || err instanceof Error ? err.message : String(err) };
    }
  }

  wait(childId: string, submissionId: string, signal: AbortSignal): Promise<SubagentOutcome | null> {
    return new Promise((resolve) => {
      const watch = new TurnWatch(submissionId);
      let unsubscribe: (() => void) | null = null;
      let unStopped: (() => void) | null = null;
      let done = false;
      const finish = (outcome: SubagentOutcome | null) => {
        if (done) return;
        done = true;
        unsubscribe?.();
        unStopped?.();
        signal.removeEventListener('abort', onAbort);
        resolve(outcome);
      };
      const onAbort = () => {
        const turnId = watch.activeTurn;
        // The parent's turn was interrupted (or failed): so is the child's. A shutdown
        // stops the parent too, but leaves both turns open for recovery.
        if (turnId && !this.host.closing()) {
          const id = `delegate_interrupt_${++this.interrupts}_${Date.now()}`;
          this.host.open(childId).then(
            (child) => child?.submit({ id, op: { type: 'interrupt', turn_id: turnId } }),
            () => undefined, // the child cannot be opened (shutting down): recovery handles it
          );
        }
        finish(null);
      };
      const follow = async (): Promise<void> => {
        if (done) return;
        let child: Session | null;
        try {
          child = await this.host.open(childId);
        } catch (err) {
          return finish({ status: 'failed', text: `the child session ${childId} cannot be opened: ${(err as Error).message}` });
        }
        if (done) return;
        if (!child) return finish({ status: 'failed', text: `the child session ${childId} no longer exists` });
        // Subscribe first, then read what is committed up to now: no batch is missed.
        let readUpTo = 0;
        const pending: CommittedBatch[] = [];
        let caughtUp = false;
        unsubscribe = child.subscribe((batch) => {
          if (!caughtUp) pending.push(batch);
          else if (batch.sequence > readUpTo) {
            readUpTo = batch.sequence;
            watch.see(batch.events);
            if (watch.outcome) finish(watch.outcome);
          }
        });
        // A child that stops itself (journal failure, crash) is hydrated again and followed anew.
        unStopped = child.onStopped(() => {
          unsubscribe?.();
          unStopped?.();
          setTimeout(() => void follow().catch(followFailed), 100).unref();
        });
        for (let page = await this.host.readAfter(childId, readUpTo, PAGE); page.length > 0; page = await this.host.readAfter(childId, readUpTo, PAGE)) {
          for (const batch of page) {
            readUpTo = batch.sequence;
            watch.see(batch.events);
          }
        }
        caughtUp = true;
        for (const batch of pending) {
          if (batch.sequence <= readUpTo) continue;
          readUpTo = batch.sequence;
          watch.see(batch.events);
        }
        if (watch.outcome) finish(watch.outcome);
      };
      if (signal.aborted) return finish(null);
      // The journal could not be read (unreachable): try again shortly, as after a child's stop.
      const followFailed = (): void => {
        unsubscribe?.();
        unStopped?.();
        if (!done) setTimeout(() => void follow().catch(followFailed), 1000).unref();
      };
      signal.addEventListener('abort', onAbort, { once: true });
      void follow().catch(followFailed);
    });
  }

  /** The approval a parent's current delegate call waits for, down the chain of children. */
  childApproval(state: SessionState): PendingChildApproval | null {
    const childId = state.turn?.calls[0]?.child_session_id;
    if (!childId) return null;
    // A child whose turn the parent waits for is resident (followed); any other shows nothing.
    const child = this.host.resident(childId);
    if (!child) return null;
    const descriptor = child.descriptor();
    if (descriptor.pending_approval) return { child_session_id: childId, request: descriptor.pending_approval };
    return descriptor.pending_child_approval;
  }
}
