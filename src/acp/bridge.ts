/**
 * `agentd acp`: an Agent Client Protocol agent (the SDK's stable v1 entrypoint) whose
 * sessions are agentd sessions, reached as a client of the daemon (src/client/). The
 * client resumes every attached session with `after_sequence` after a reconnect, so the
 * updates sent to the editor are the journal's events in order, none lost or repeated;
 * a prompt is answered by the end of its own turn, whenever that comes.
 */
import * as acp from '@agentclientprotocol/sdk';
import type { BatchFrame, CreateSessionConfig, Event, SessionDescriptor, TurnEndMsg } from '../../protocol/index.js';
import type { AgentdClient } from '../client/client.js';
import { newSubmissionId } from '../client/client.js';
import { configOptions, applyConfigOption, settingsOf, type ConfigSettings } from './config-options.js';
import { decisionOf, PERMISSION_OPTIONS, promptText, PromptContentError, stopReason, textContent, toolCall, toolCallEnd } from './mapping.js';

export interface BridgeOptions {
  client: AgentdClient;
  version: string;
  /** Diagnostics (stderr): stdout carries only the protocol. */
  log: (line: string) => void;
}

interface PendingPrompt {
  sessionId: string;
  admitted: boolean;
  text: string;
  resolve: (r: acp.PromptResponse) => void;
  reject: (e: unknown) => void;
}

interface SessionView {
  cwd: string;
  activeTurn: string | null;
  /** Replayed batches up to here are history: their approvals are not asked again. */
  replayUntil: number;
  /** Whether the current model step streamed deltas (else its agent_message is sent whole). */
  streamed: boolean;
  output: Map<string, string>;
  /** The model and approval policy now (the descriptor's, then its events'). */
  settings: ConfigSettings;
}

const OUTPUT_KEEP = 256 * 1024;

export class AcpBridge {
  private conn: acp.AgentConnection | null = null;
  private readonly sessions = new Map<string, SessionView>();
  private readonly prompts = new Map<string, PendingPrompt>();
  private readonly turns = new Map<string, string>();
  private readonly permissions = new Map<string, { sessionId: string; abort: AbortController }>();
  /** Config changes waiting for their first event (the change, or a warning), by submission id. */
  private readonly waiters = new Map<string, (ev: Event) => void>();

  constructor(private readonly options: BridgeOptions) {
    const { client } = options;
    client.events.on('batch', (b) => this.onBatch(b));
    client.events.on('admitted', (a) => {
      const p = this.prompts.get(a.submission_id);
      if (p) p.admitted = true;
    });
    client.events.on('state', (s) => {
      if (s.kind === 'connected') this.resubmit();
      else if (s.kind !== 'closed') options.log(`agentd acp: ${s.kind}${'error' in s && s.error ? `: ${s.error}` : ''}`);
    });
  }

  /** Serve ACP on a stream until it closes. */
  connect(stream: acp.Stream): acp.AgentConnection {
    const app = acp
      .agent({ name: 'agentd' })
      .onRequest(acp.methods.agent.initialize, () => ({
        protocolVersion: acp.PROTOCOL_VERSION,
        agentCapabilities: {
          loadSession: true,
          promptCapabilities: { embeddedContext: true, image: false, audio: false },
          mcpCapabilities: { http: true, sse: false },
          sessionCapabilities: { list: {}, resume: {} },
        },
        agentInfo: { name: 'agentd', title: 'agentd', version: this.options.version },
        authMethods: [],
      }))
      .onRequest(acp.methods.agent.session.new, ({ params }) => this.newSession(params))
      .onRequest(acp.methods.agent.session.load, ({ params }) => this.load(params.sessionId, true))
      .onRequest(acp.methods.agent.session.resume, ({ params }) => this.load(params.sessionId, false))
      .onRequest(acp.methods.agent.session.list, ({ params }) => this.list(params))
      .onRequest(acp.methods.agent.session.prompt, ({ params }) => this.prompt(params))
      .onRequest(acp.methods.agent.session.setConfigOption, async ({ params }) => {
        const view = this.sessions.get(params.sessionId);
        if (!view) throw acp.RequestError.invalidParams(undefined, `session ${params.sessionId} is not loaded`);
        const id = newSubmissionId('acp-cfg');
        const settled = new Promise<Event>((resolve) => this.waiters.set(id, resolve));
        try {
          await applyConfigOption(this.options.client, params.sessionId, id, params.configId, String(params.value), view.settings.model.route);
        } catch (err) {
          this.waiters.delete(id);
          throw err;
        }
        const ev = await settled;
        if (ev.msg.type === 'warning') throw acp.RequestError.invalidParams(undefined, ev.msg.message);
        return { configOptions: await configOptions(this.options.client, view.settings) };
      })
      .onNotification(acp.methods.agent.session.cancel, ({ params }) => this.cancel(params.sessionId));
    this.conn = app.connect(stream);
    return this.conn;
  }

  private async newSession(params: acp.NewSessionRequest): Promise<acp.NewSessionResponse> {
    const mcp = mcpServers(params.mcpServers);
    // The daemon validates the servers and fills their defaults (timeouts).
    const config = { cwd: params.cwd, ...(mcp && { mcp_servers: mcp }) } as CreateSessionConfig;
    const session = await this.options.client.createSession(config);
    this.view(session);
    await this.options.client.attach(session.session_id, { afterSequence: session.head_sequence });
    return { sessionId: session.session_id, configOptions: await configOptions(this.options.client, session) };
  }

  /** `session/load` replays the whole journal as updates, then answers; `session/resume` attaches at the tail. */
  private async load(sessionId: string, replay: boolean): Promise<acp.LoadSessionResponse> {
    const { client } = this.options;
    const page = await this.descriptor(sessionId);
    const view = this.view(page);
    view.replayUntil = replay ? page.head_sequence : 0;
    const attached = await client.attach(sessionId, { afterSequence: replay ? 0 : page.head_sequence });
    view.replayUntil = replay ? attached.head_sequence : 0;
    view.settings = settingsOf(attached.session);
    await this.caughtUp(sessionId, attached.head_sequence);
    const pending = attached.session.pending_approval;
    if (pending && !this.permissions.has(pending.approval_id)) this.askPermission(sessionId, pending);
    return { configOptions: await configOptions(client, attached.session) };
  }

  private caughtUp(sessionId: string, head: number): Promise<void> {
    const { client } = this.options;
    if ((client.lastSequence(sessionId) ?? 0) >= head) return Promise.resolve();
    return new Promise((resolve) => {
      const off = client.events.on('batch', (b) => {
        if (b.session_id === sessionId && b.sequence >= head) {
          off();
          resolve();
        }
      });
    });
  }

  private async list(params: acp.ListSessionsRequest): Promise<acp.ListSessionsResponse> {
    const page = await this.options.client.listSessions({ limit: 50, ...(params.cursor && { before: params.cursor }) });
    const sessions = page.sessions
      .filter((s) => !params.cwd || s.cwd === params.cwd)
      .map((s) => ({ sessionId: s.session_id, cwd: s.cwd, title: s.title, updatedAt: new Date(s.updated_at).toISOString() }));
    return { sessions, nextCursor: page.next_before };
  }

  private async prompt(params: acp.PromptRequest): Promise<acp.PromptResponse> {
    let text: string;
    try {
      text = promptText(params.prompt);
    } catch (err) {
      if (err instanceof PromptContentError) throw acp.RequestError.invalidParams(undefined, err.message);
      throw err;
    }
    if (!this.sessions.has(params.sessionId)) throw acp.RequestError.invalidParams(undefined, `session ${params.sessionId} is not loaded`);
    const id = newSubmissionId('acp');
    const answer = new Promise<acp.PromptResponse>((resolve, reject) =>
      this.prompts.set(id, { sessionId: params.sessionId, admitted: false, text, resolve, reject }),
    );
    await this.submitMessage(id);
    return answer;
  }

  /** Submit (or, with the same id, submit again: the daemon admits a message once). */
  private async submitMessage(id: string): Promise<void> {
    const p = this.prompts.get(id);
    if (!p) return;
    try {
      await this.options.client.submit(p.sessionId, { id, op: { type: 'message', text: p.text, mode: 'queue' } });
    } catch (err) {
      const code = (err as { code?: string }).code;
      if (code && code !== 'journal_unavailable') {
        this.prompts.delete(id);
        p.reject(new acp.RequestError(-32603, (err as Error).message, { code }));
      }
      // A dropped connection: resubmitted when the client is connected again.
    }
  }

  /** After a reconnect: messages whose admission was not seen are sent again with their ids. */
  private resubmit(): void {
    for (const [id, p] of this.prompts) if (!p.admitted) void this.submitMessage(id);
  }

  private cancel(sessionId: string): void {
    for (const [id, perm] of this.permissions) {
      if (perm.sessionId !== sessionId) continue;
      this.permissions.delete(id);
      perm.abort.abort();
    }
    const turn = this.sessions.get(sessionId)?.activeTurn;
    if (turn) void this.options.client.submit(sessionId, { id: newSubmissionId('acp-int'), op: { type: 'interrupt', turn_id: turn } }).catch(() => undefined);
  }

  private async descriptor(sessionId: string): Promise<SessionDescriptor> {
    const attached = this.sessions.has(sessionId) ? null : await this.options.client.attach(sessionId, { replayBatches: 0 });
    if (attached) {
      await this.options.client.detach(sessionId);
      return attached.session;
    }
    const page = await this.options.client.listSessions({ limit: 200, include_children: true });
    const found = page.sessions.find((s) => s.session_id === sessionId);
    if (found) return found;
    const again = await this.options.client.attach(sessionId, { replayBatches: 0 });
    return again.session;
  }

  private view(s: SessionDescriptor): SessionView {
    let v = this.sessions.get(s.session_id);
    if (!v) {
      v = { cwd: s.cwd, activeTurn: s.active_turn_id, replayUntil: 0, streamed: false, output: new Map(), settings: settingsOf(s) };
      this.sessions.set(s.session_id, v);
    }
    return v;
  }

  private onBatch(b: BatchFrame): void {
    const view = this.sessions.get(b.session_id);
    if (!view) return;
    for (const ev of b.events) this.onEvent(b.session_id, view, ev, b.sequence <= view.replayUntil);
  }

  private update(sessionId: string, update: acp.SessionUpdate): void {
    void this.conn?.client.notify(acp.methods.client.session.update, { sessionId, update }).catch(() => undefined);
  }

  private onEvent(sid: string, view: SessionView, ev: Event, replaying: boolean): void {
    const m = ev.msg;
    const waiter = ev.submission_id ? this.waiters.get(ev.submission_id) : undefined;
    if (waiter) {
      this.waiters.delete(ev.submission_id!);
      waiter(ev);
    }
    if (ev.submission_id && ev.turn_id && this.prompts.has(ev.submission_id)) this.turns.set(ev.turn_id, ev.submission_id);
    switch (m.type) {
      case 'user_message':
        if (replaying || !ev.submission_id || !this.prompts.has(ev.submission_id)) this.update(sid, { sessionUpdate: 'user_message_chunk', content: { type: 'text', text: m.text } });
        return;
      case 'turn_started':
        view.activeTurn = m.turn_id;
        view.streamed = false;
        return;
      case 'agent_message_delta':
        view.streamed = true;
        this.update(sid, { sessionUpdate: 'agent_message_chunk', content: { type: 'text', text: m.delta } });
        return;
      case 'agent_message':
        if (!view.streamed && m.text) this.update(sid, { sessionUpdate: 'agent_message_chunk', content: { type: 'text', text: m.text } });
        view.streamed = false;
        return;
      case 'agent_reasoning_delta':
        this.update(sid, { sessionUpdate: 'agent_thought_chunk', content: { type: 'text', text: m.delta } });
        return;
      case 'tool_call_begin':
        view.output.set(m.call_id, '');
        this.update(sid, { sessionUpdate: 'tool_call', ...toolCall(m, view.cwd, 'in_progress') });
        return;
      case 'exec_output_delta': {
        const text = ((view.output.get(m.call_id) ?? '') + m.chunk).slice(-OUTPUT_KEEP);
        view.output.set(m.call_id, text);
        this.update(sid, { sessionUpdate: 'tool_call_update', toolCallId: m.call_id, content: textContent(text) });
        return;
      }
      case 'tool_call_end':
        view.output.delete(m.call_id);
        this.update(sid, { sessionUpdate: 'tool_call_update', ...toolCallEnd(m) });
        return;
      case 'exec_approval_request':
        if (!replaying) this.askPermission(sid, m);
        return;
      case 'model_changed':
        view.settings = { ...view.settings, model: { route: m.route, reasoning_effort: m.reasoning_effort } };
        return;
      case 'approval_policy_changed':
        view.settings = { ...view.settings, approval_policy: m.approval_policy };
        return;
      case 'approval_resolved': {
        const perm = this.permissions.get(m.approval_id);
        if (perm) {
          this.permissions.delete(m.approval_id);
          perm.abort.abort(); // answered elsewhere: withdrawn here ($/cancel_request)
        }
        return;
      }
      case 'turn_complete':
      case 'turn_interrupted':
      case 'turn_failed':
        if (ev.turn_id === view.activeTurn) view.activeTurn = null;
        this.turnEnded(ev.turn_id, m);
        return;
      default:
        return;
    }
  }

  private turnEnded(turnId: string | null, m: TurnEndMsg): void {
    const id = turnId ? this.turns.get(turnId) : undefined;
    if (!id || !turnId) return;
    this.turns.delete(turnId);
    const p = this.prompts.get(id);
    if (!p) return;
    this.prompts.delete(id);
    const r = stopReason(m);
    if ('stop' in r) p.resolve({ stopReason: r.stop });
    else p.reject(new acp.RequestError(-32603, `${r.failed.code}: ${r.failed.message}`, r.failed));
  }

  private askPermission(sid: string, m: { approval_id: string; call_id: string; tool: string; arguments: unknown; cwd: string }): void {
    const abort = new AbortController();
    this.permissions.set(m.approval_id, { sessionId: sid, abort });
    const conn = this.conn;
    if (!conn) return;
    const toolCallUpdate = toolCall({ type: 'exec_approval_request', ...m } as never, m.cwd, 'pending');
    conn.client
      .request(acp.methods.client.session.requestPermission, { sessionId: sid, toolCall: toolCallUpdate, options: PERMISSION_OPTIONS }, { cancellationSignal: abort.signal })
      .then((res) => {
        if (this.permissions.get(m.approval_id)?.abort !== abort) return; // withdrawn meanwhile
        this.permissions.delete(m.approval_id);
        const decision = decisionOf(res.outcome);
        if (!decision) return;
        return this.options.client.submit(sid, { id: newSubmissionId('acp-ap'), op: { type: 'exec_approval', id: m.approval_id, decision } });
      })
      .catch((err) => this.options.log(`agentd acp: permission request ${m.approval_id}: ${(err as Error).message}`));
  }
}

/** The editor's MCP servers as the session's own `mcp_servers` (stdio and HTTP; SSE is not supported). */
export function mcpServers(list: readonly acp.McpServer[]): Record<string, Record<string, unknown>> | null {
  if (list.length === 0) return null;
  const out: Record<string, Record<string, unknown>> = Object.create(null) as Record<string, Record<string, unknown>>;
  for (const s of list) {
    if ('command' in s) {
      out[s.name] = { command: s.command, args: s.args, env: Object.fromEntries(s.env.map((e) => [e.name, e.value])) };
    } else if (s.type === 'http') {
      out[s.name] = { url: s.url, headers: Object.fromEntries(s.headers.map((h) => [h.name, h.value])) };
    } else {
      throw acp.RequestError.invalidParams(undefined, `MCP server "${s.name}": agentd speaks stdio and Streamable HTTP, not SSE`);
    }
  }
  return { ...out };
}
