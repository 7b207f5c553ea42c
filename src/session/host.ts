/**
 * SessionHost: the registry of every session in one data dir. Creates sessions, hydrates
 * them lazily from their checkpoints, recovers those with unfinished work at start-up,
 * evicts quiet ones with no subscribers, and reads the journal for replay.
 */
import { mkdirSync } from 'node:fs';
import { homedir } from 'node:os';
import { join, resolve } from 'node:path';
import type { Logger } from 'pino';
import { cleanTitle, type CreateSessionConfig, type SessionDescriptor } from '../../protocol/index.js';
import { resolveRoutes, type Config } from '../config/config.js';
import { AgentdError } from '../errors.js';
import { Journal, type SessionJournal } from '../journal/journal.js';
import { SharedWriter } from '../journal/writer.js';
import { createModelClient } from '../model/registry.js';
import type { ModelClient, ModelRoute } from '../model/types.js';
import { McpManager, resolveMcpServers, type OwnMcpServers } from '../mcp/index.js';
import { shellEnvPolicy, toolEnv } from '../tools/env.js';
import { createTools, type Toolset } from '../tools/index.js';
import type { CommittedBatch, ListOptions, SessionHostApi } from './api.js';
import type { OtherSession, SessionDeps } from './deps.js';
import type { ResidentSessionStats, SessionObserver } from './observer.js';
import type { FaultCause } from './chart_types.js';
import { Session, type SessionHostHooks } from './session.js';
import { HostSubagents } from './subagent_host.js';
import type { ToolboxFactory } from './session_ports.js';
import { baseTokens } from './context.js';
import { lacksContext, newSessionState, parseCheckpoint, withQueuedTexts, type SessionState } from './state.js';
import { nanoid, observedModels, residentStats, sharedDeps, toolboxFactory } from './host_wiring.js';
import { listPage, otherSession } from './host_reads.js';
import { systemPromptFor } from './system_prompt.js';
import { cwdOf, expandHome, isDirectory, recordRecoveryFailure, withRebuiltContext } from './recovery.js';
import { Tx } from './tx.js';
import { residentTree, settleTurns } from './host_delete.js';
import { startRetention } from './retention.js';

export interface SessionHostOptions {
  dataDir: string;
  config: Config;
  logger?: Logger;
  /** Override the model client per route (tests, benchmarks). */
  modelClient?: (route: ModelRoute) => ModelClient;
  /** The journal to use instead of DATA_DIR/agentd.db (cluster mode: the PostgreSQL journal). */
  journal?: SessionJournal;
  /** Cluster mode: who may run which session (leases). Without it every session is this host's. */
  ownership?: SessionOwnership;
  /** Telemetry (docs/operations.md): sees every committed batch, wraps the model clients. */
  observer?: SessionObserver;
}

/**
 * Cluster mode's side of the host (docs/cluster.md): a session's actor runs only where its
 * lease is held. The host asks before creating a session, and tells when it stops running
 * one (evicted: the lease can go back) or lost one (fenced).
 */
export interface SessionOwnership {
  /** Take the lease of a brand-new session; false: it could not be taken (creation fails). */
  claimNew(sessionId: string): Promise<boolean>;
  /** Hold the lease of a stored session about to be hydrated here (held already, or taken now); false: a live node runs it. */
  acquire(sessionId: string): boolean | Promise<boolean>;
  /** The session's actor was evicted (quiet, nobody attached): its lease may be handed back. */
  evicted(sessionId: string): void;
  /** A commit found the lease gone: the actor stopped at once. */
  fenced(sessionId: string): void;
  /** The host is closing: every session stopped and committed its last write; the journal is still open. */
  leaving(): void | Promise<void>;
}

export class SessionHost implements SessionHostApi {
  readonly journal: SessionJournal;
  /** One writer for all sessions: their group commits share one transaction per tick. */
  readonly writer: SharedWriter;
  private readonly sessions = new Map<string, Session>();
  private readonly evictTimers = new Map<string, { session: Session; timer: NodeJS.Timeout }>();
  private readonly routes: Map<string, ModelRoute>;
  private readonly toolset: Toolset;
  /** The MCP servers, shared per (server, cwd) — see docs/tools.md "What is shared". */
  private readonly mcp: McpManager;
  private readonly subagents: HostSubagents;
  /** What every session's actor is given (immutable): one object for all of them. */
  private readonly deps: SessionDeps;
  /** Builds a session's toolbox when it first needs one (an idle session holds none). */
  private readonly toolbox: ToolboxFactory;
  /** The host's side of every session (lookups, faults, fencing, activity): one object for all of them. */
  private readonly hooks: SessionHostHooks;
  /** Sessions whose actor stopped itself with its turn open, and why (until it is next hydrated). */
  private readonly faults = new Map<string, FaultCause>();
  /** Sessions being hydrated (awaiting the journal): a second open waits for the first, never hydrates twice. */
  private readonly opening = new Map<string, Promise<Session | null>>();
  private closed = false;
  /** Stops the retention sweeps (config `retention.delete_after_days`). */
  private stopRetention: (() => void) | null = null;
  /** Told after each delete (the server tells the attached clients). */
  private readonly deletedListeners = new Set<(sessionId: string, deleted: string[]) => void>();

  private constructor(private readonly options: SessionHostOptions) {
    mkdirSync(options.dataDir, { recursive: true, mode: 0o700 });
    this.journal =
      options.journal ??
      new Journal(join(options.dataDir, 'agentd.db'), {
        synchronous: options.config.journal.synchronous,
        onCheckpointBehind: (status) =>
          options.logger?.warn({ checkpoint: status }, 'WAL checkpoints are not keeping up: the WAL keeps growing'),
      });
    this.writer = new SharedWriter(this.journal, {
      tickMs: options.config.journal.group_commit_ms,
      onError: (err) => options.logger?.error({ err }, 'settling a committed write failed'),
      ...(options.observer?.commitTick && { onCommitted: options.observer.commitTick.bind(options.observer) }),
    });
    this.routes = resolveRoutes(options.config);
    this.toolset = createTools(options.config, { dataDir: options.dataDir });
    options.logger?.info({ containment: this.toolset.containment }, 'shell commands run contained');
    // A stdio MCP server gets the shell's minimal environment plus its own `env`.
    this.mcp = new McpManager(options.config.mcp_servers, {
      baseEnv: toolEnv(shellEnvPolicy(options.config)),
      outputCapBytes: options.config.limits.shell_output_cap_bytes,
      limits: options.config.mcp,
      ...(options.observer?.traceContext && { traceContext: options.observer.traceContext.bind(options.observer) }),
    });
    this.subagents = new HostSubagents({
      createChild: (config, child) => this.create(config, child),
      open: (id) => this.open(id),
      resident: (id) => this.sessions.get(id),
      exists: async (id) => this.sessions.has(id) || (await this.journal.loadSession(id)) !== null,
      // Counted from this process's start (the journal keeps no per-parent count).
      childCount: () => 0,
      readAfter: async (id, after, limit) => this.journal.readAfter(id, after, limit),
      closing: () => this.closed,
    }, { maxPerTurn: options.config.limits.max_subagents_per_turn, maxChildren: options.config.limits.max_children });
    this.deps = sharedDeps(options.config, this.routes, this.toolset, observedModels(options.modelClient ?? createModelClient, options.observer));
    this.toolbox = toolboxFactory(this.toolset, this.subagents, options.config.limits.max_subagent_depth);
    this.hooks = {
      childApproval: (s) => this.subagents.childApproval(s),
      lookupSession: (other) => this.lookup(other),
      onFault: (session, cause, hydratedAfter) => this.faulted(session, cause, hydratedAfter),
      onCommit: (session, batch) => {
        this.touch(session);
        options.observer?.committed(batch);
      },
      onFenced: (session) => {
        if (this.sessions.get(session.id) === session) this.sessions.delete(session.id);
        this.options.ownership?.fenced(session.id);
      },
    };
  }

  /**
   * Open the data dir's journal and recover every session with unfinished work. In
   * cluster mode nothing is recovered here: the node takes over unfinished sessions whose
   * lease is free (`recover`).
   */
  static async open(options: SessionHostOptions): Promise<SessionHost> {
    const host = new SessionHost(options);
    if (!options.ownership) await host.recoverAll();
    const days = options.config.retention.delete_after_days;
    if (days !== undefined) {
      host.stopRetention = startRetention({ days, journal: host.journal, remove: (id) => host.delete(id), logger: options.logger });
    }
    return host;
  }

  /**
   * Hydrate (and so recover) one session whose lease this node has just taken. Its working
   * directory must be reachable here (shared storage, docs/cluster.md): if it is not, the
   * open turn fails with a clear error instead of running tools in the wrong place.
   */
  async recover(sessionId: string): Promise<boolean> {
    try {
      const stored = this.sessions.has(sessionId) ? null : await this.journal.loadSession(sessionId);
      const cwd = stored ? cwdOf(stored.checkpoint) : null;
      if (cwd !== null && !isDirectory(cwd)) {
        this.markRecoveryFailed(sessionId, new Error(`its working directory ${cwd} does not exist on this node (cluster mode needs every cwd at the same path on every node)`));
        return false;
      }
      return (await this.open(sessionId)) !== null;
    } catch (err) {
      this.options.logger?.error({ err, session_id: sessionId }, 'session recovery failed');
      this.sessions.delete(sessionId);
      this.markRecoveryFailed(sessionId, err as Error);
      return false;
    }
  }

  /** `open` without the journal: the resident session, touched (its idle eviction restarts). */
  ready(sessionId: string): Session | undefined {
    if (this.closed) return undefined;
    const live = this.sessions.get(sessionId);
    if (live) this.touch(live);
    return live;
  }

  /** The session's actor if it runs here now (no hydration). */
  resident(sessionId: string): Session | undefined {
    return this.sessions.get(sessionId);
  }

  /**
   * The lease is gone (cluster mode): stop the actor at once, committing nothing more —
   * another node may already be writing this session.
   */
  fence(sessionId: string, reason: string): void {
    const session = this.sessions.get(sessionId);
    if (!session) return;
    this.sessions.delete(sessionId);
    const entry = this.evictTimers.get(sessionId);
    if (entry) clearTimeout(entry.timer);
    this.evictTimers.delete(sessionId);
    session.fence(reason);
  }

  /** Hydrate (and so recover) each session whose checkpoint says work was left. */
  private async recoverAll(): Promise<void> {
    for (const id of await this.journal.unfinishedSessions()) {
      try {
        await this.open(id);
        this.options.logger?.info({ session_id: id }, 'recovered session with unfinished work');
      } catch (err) {
        this.options.logger?.error({ err, session_id: id }, 'session recovery failed');
        this.sessions.delete(id);
        this.markRecoveryFailed(id, err as Error);
      }
    }
    // Recovery's writes (every session's, in one tick) are committed before the host is used.
    this.writer.tickNow();
  }

  /**
   * A session that cannot be recovered (e.g. an unreadable checkpoint) gets a clear error
   * in its journal: its open turn, if any, ends `turn_failed {code: "recovery_failed"}`,
   * and a warning says why. It is no longer flagged unfinished, so the next start does
   * not try again; the daemon and the other sessions go on.
   */
  private markRecoveryFailed(sessionId: string, error: Error): void {
    recordRecoveryFailure(this.journal, this.writer, sessionId, error).catch((err: unknown) =>
      this.options.logger?.error({ err, session_id: sessionId }, 'could not record the recovery failure'),
    );
  }

  /** A new session; `child` makes it a subagent (docs/tools.md) with that id. */
  async create(
    config: CreateSessionConfig,
    child?: { id: string; parent: { session_id: string; call_id: string }; depth: number },
  ): Promise<SessionDescriptor> {
    const { config: cfg } = this.options;
    const routeName = config.model_route ?? cfg.models.default;
    const route = this.routes.get(routeName);
    if (!route) throw new AgentdError('invalid_frame', `config.model_route: unknown model route "${routeName}"`);
    // Never the daemon's own working directory (docs/sessions.md#working-directory).
    const cwd = resolve(expandHome(config.cwd ?? cfg.workspace ?? homedir()));
    if (!isDirectory(cwd)) {
      const field = config.cwd !== undefined ? 'config.cwd' : 'the configured workspace';
      throw new AgentdError('invalid_frame', `${field}: "${cwd}" is not an existing directory`);
    }
    const now = Date.now();
    const systemPrompt = config.system_prompt ?? null;
    const tools = [...this.toolset.tools.values()].map((t) => t.spec);
    const base = baseTokens(systemPromptFor(systemPrompt, route, cfg, cwd, [...this.toolset.tools.keys()], now), tools);
    const state = newSessionState({
      session_id: child?.id ?? `s_${nanoid()}`,
      cwd,
      approval_policy: config.approval_policy ?? cfg.approval_policy,
      model: { route: route.route, model: route.model, reasoning_effort: null, context_window: route.context_window },
      title: config.title === undefined ? null : cleanTitle(config.title),
      at: now,
      ...(child && { parent: child.parent, depth: child.depth }),
      system_prompt: systemPrompt,
      base_tokens: base,
      ...(config.shell_allow && { shell_allow: config.shell_allow }),
      token_budget: config.token_budget ?? cfg.limits.session_token_budget ?? null,
      ...(config.mcp_servers && { mcp_servers: config.mcp_servers }),
    });
    const configured = new Tx(state).emit({
      type: 'session_configured',
      session_id: state.session_id,
      model: state.model,
      cwd: state.cwd,
      approval_policy: state.approval_policy,
      title: state.title,
      system_prompt_bytes: systemPrompt === null ? 0 : Buffer.byteLength(systemPrompt, 'utf8'),
    });
    // The session row and its first batch are one commit, through its Recorder.
    if (this.options.ownership && !(await this.options.ownership.claimNew(state.session_id))) {
      throw new AgentdError('internal', 'the session could not be created: its lease could not be taken');
    }
    const { session, started } = this.hydrate(state, 0, { at: now, change: configured.toChange() });
    // Answered once the session row and its first batch are committed (the writer's next tick).
    if (!(await started) || session.headSequence() < 1) {
      void session.stop();
      this.sessions.delete(state.session_id);
      throw new AgentdError('internal', 'the session could not be created: the journal write failed');
    }
    this.scheduleEviction(session);
    return session.descriptor();
  }

  /** Newest first; subagent sessions only with `include_children` (pages are filled past them). */
  list(options: ListOptions): Promise<{ sessions: SessionDescriptor[]; next_before: string | null }> {
    return listPage(this.journal, (id) => this.sessions.get(id), options, (id, err) =>
      this.options.logger?.warn({ err, session_id: id }, 'unreadable checkpoint left out of the list'),
    );
  }

  /** The session's actor, hydrated from the journal if it is not resident; null: no such session. */
  async open(sessionId: string): Promise<Session | null> {
    if (this.closed) throw new AgentdError('stopped', 'the daemon is shutting down');
    const live = this.sessions.get(sessionId);
    if (live) {
      this.touch(live);
      return live;
    }
    let opening = this.opening.get(sessionId);
    if (!opening) {
      opening = this.hydrateStored(sessionId).finally(() => this.opening.delete(sessionId));
      this.opening.set(sessionId, opening);
    }
    return opening;
  }

  private async hydrateStored(sessionId: string): Promise<Session | null> {
    const stored = await this.journal.loadSession(sessionId);
    if (!stored) return null;
    // Cluster mode: hydrate only under this node's lease (a subagent's child, say, may run elsewhere).
    if (this.options.ownership && !(await this.options.ownership.acquire(sessionId))) {
      throw new AgentdError('internal', `session ${sessionId} runs on another node`);
    }
    let state: SessionState;
    try {
      state = withQueuedTexts(parseCheckpoint(stored.checkpoint), stored.queued);
    } catch (err) {
      throw new AgentdError('internal', `session ${sessionId} cannot be loaded: its checkpoint is unreadable (${(err as Error).message})`);
    }
    if (lacksContext(state)) state = withRebuiltContext(state, await this.journal.loadTranscript(sessionId));
    if (this.closed) throw new AgentdError('stopped', 'the daemon is shutting down');
    // Hydrated meanwhile by another path (create, recovery): that actor is the session's.
    const raced = this.sessions.get(sessionId);
    if (raced) return raced;
    const { session } = this.hydrate(state, stored.headSequence);
    this.scheduleEviction(session);
    return session;
  }

  /**
   * Delete the session and its subagent sessions for good (docs/sessions.md#deleting-sessions):
   * `busy` while a turn of theirs runs or waits, unless `force` (the turn is interrupted
   * first); their actors stop, then the journal forgets them. Answers the deleted ids.
   */
  async delete(sessionId: string, options: { force?: boolean } = {}): Promise<string[]> {
    if (this.closed) throw new AgentdError('stopped', 'the daemon is shutting down');
    if (!this.sessions.has(sessionId) && !(await this.journal.loadSession(sessionId))) {
      throw new AgentdError('unknown_session', `no session ${sessionId}`);
    }
    await settleTurns(sessionId, await residentTree(sessionId, this.sessions, this.journal), options.force ?? false);
    // A session hydrated again while the delete is in flight is dropped once it is done.
    for (const session of await residentTree(sessionId, this.sessions, this.journal)) this.drop(session);
    const deleted = await this.journal.deleteSessions(sessionId);
    if (deleted.length === 0) throw new AgentdError('unknown_session', `no session ${sessionId}`);
    for (const id of deleted) {
      const live = this.sessions.get(id);
      if (live) this.drop(live);
      this.faults.delete(id);
    }
    this.options.logger?.info({ session_id: sessionId, deleted }, 'session deleted');
    for (const listener of this.deletedListeners) listener(sessionId, deleted);
    return deleted;
  }

  /** Tell the delete listeners of a delete carried out elsewhere (cluster mode: another node). */
  announceDeleted(sessionId: string, deleted: string[]): void {
    for (const listener of this.deletedListeners) listener(sessionId, deleted);
  }

  /** Be told of each delete: the session named and every deleted id (it first). Returns unsubscribe. */
  onDeleted(listener: (sessionId: string, deleted: string[]) => void): () => void {
    this.deletedListeners.add(listener);
    return () => this.deletedListeners.delete(listener);
  }

  /** Stop a resident session and forget it (no eviction, no lease hand-back: it is being deleted). */
  private drop(session: Session): void {
    const entry = this.evictTimers.get(session.id);
    if (entry) clearTimeout(entry.timer);
    this.evictTimers.delete(session.id);
    if (this.sessions.get(session.id) === session) this.sessions.delete(session.id);
    session.stop();
  }

  async readAfter(sessionId: string, after: number, limit: number): Promise<CommittedBatch[]> {
    return this.journal.readAfter(sessionId, after, limit);
  }

  async readBefore(sessionId: string, before: number, limit: number): Promise<CommittedBatch[]> {
    return this.journal.readBefore(sessionId, before, limit);
  }

  /** Sessions resident in memory now. */
  get residentCount(): number {
    return this.sessions.size;
  }

  isResident(sessionId: string): boolean {
    return this.sessions.has(sessionId);
  }

  /** Resident sessions by status and pending approvals (telemetry, at scrape time). */
  residentStats(): ResidentSessionStats {
    return residentStats(this.sessions.values());
  }

  /** The MCP servers' connections by state (telemetry). */
  mcpStates(): Record<string, number> {
    return this.mcp.states();
  }

  /** The journal's side of /healthz: the shared writer's ticks and the WAL checkpoints (`behind` when they cannot keep up). */
  journalHealth(): { writer: ReturnType<SharedWriter['statistics']>; checkpoint: ReturnType<Journal['checkpointStatus']> } {
    return { writer: this.writer.statistics(), checkpoint: this.journal.checkpointStatus() };
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.stopRetention?.();
    for (const { timer } of this.evictTimers.values()) clearTimeout(timer);
    this.evictTimers.clear();
    const last = [...this.sessions.values()].map((session) => session.stop());
    this.sessions.clear();
    // Every session's last write, and anything else the writer holds, is committed before the journal closes.
    await Promise.all(last);
    await this.writer.close();
    await this.options.ownership?.leaving();
    await this.journal.close();
    // Stopping sent TERM to running tool processes; make sure none outlives the daemon.
    await Promise.all([this.toolset.close(), this.mcp.close()]);
  }

  /** A resident session for this state; `started` resolves once what its start recorded is committed. */
  private hydrate(
    state: SessionState,
    headSequence: number,
    created?: { at: number; change: ReturnType<Tx['toChange']> },
  ): { session: Session; started: Promise<boolean> } {
    const { config, logger } = this.options;
    const id = state.session_id;
    const fault = this.faults.get(id) ?? null;
    this.faults.delete(id);
    const session = new Session({
      journal: this.journal,
      writer: this.writer,
      state,
      headSequence,
      groupCommitMs: config.journal.group_commit_ms,
      inboxCapacity: config.limits.inbox_capacity,
      deps: this.deps,
      toolbox: this.toolbox,
      // With MCP servers configured the session holds its servers from hydration on (shared, refcounted).
      // The session's own servers (create_session.config.mcp_servers) are its alone.
      mcp: this.mcp.hasServers || state.mcp_servers ? this.mcp.toolset(state.cwd, ownServers(state)) : null,
      host: this.hooks,
      ...(created && { created }),
      fault,
      ...(logger && { log: logger }),
    });
    this.sessions.set(state.session_id, session);
    return { session, started: session.start() };
  }

  /** A session stopped itself (`hydratedAfter`: the fault its actor was hydrated with). */
  private faulted(session: Session, cause: FaultCause, hydratedAfter: FaultCause | null): void {
    const id = session.id;
    if (this.sessions.get(id) === session) this.sessions.delete(id);
    this.faults.set(id, cause);
    // An actor crash ends its turn at once (a fresh actor fails it from the last
    // checkpoint); a journal failure waits for the next attach (the disk may be full).
    if (cause.code === 'internal' && !hydratedAfter && !this.closed) queueMicrotask(() => this.reopenAfterFault(id));
    // Cluster mode: a database outage is usually brief — the lease goes back, and the
    // takeover scan (this node's or another's) resumes the turn once commits work again.
    else if (cause.code === 'journal_write_failed') this.options.ownership?.evicted(id);
  }

  /** Hydrate a session whose actor crashed, so its open turn is failed and committed now. */
  private reopenAfterFault(sessionId: string): void {
    if (this.closed || this.sessions.has(sessionId)) return;
    this.open(sessionId).catch((err: unknown) =>
      this.options.logger?.error({ err, session_id: sessionId }, 'could not reopen the session after its fault'),
    );
  }

  /** Another session as resume_session shows it: its descriptor's summary, if its checkpoint names it. */
  private async lookup(sessionId: string): Promise<OtherSession | null> {
    const live = this.sessions.get(sessionId);
    return otherSession(sessionId, live, live ? null : await this.journal.loadSession(sessionId));
  }

  /** Activity on a session pushes its eviction back (a timer refresh: this runs per commit). */
  private touch(session: Session): void {
    const entry = this.evictTimers.get(session.id);
    if (entry?.session === session) entry.timer.refresh();
  }

  private scheduleEviction(session: Session): void {
    const old = this.evictTimers.get(session.id);
    if (old?.session === session) {
      old.timer.refresh();
      return;
    }
    if (old) clearTimeout(old.timer);
    const timer = setTimeout(() => {
      if (this.sessions.get(session.id) !== session) {
        if (this.evictTimers.get(session.id)?.session === session) this.evictTimers.delete(session.id);
      } else if (session.isQuiet && session.subscriberCount === 0) {
        this.evictTimers.delete(session.id);
        void session.stop();
        this.sessions.delete(session.id);
        this.options.ownership?.evicted(session.id);
      } else {
        timer.refresh();
      }
    }, this.options.config.limits.evict_idle_ms);
    timer.unref();
    this.evictTimers.set(session.id, { session, timer });
  }
}

/** A session's own MCP servers, resolved from its checkpoint (validated when the session was created). */
function ownServers(state: SessionState): OwnMcpServers | undefined {
  if (!state.mcp_servers) return undefined;
  return { owner: state.session_id, servers: resolveMcpServers(state.mcp_servers) };
}
