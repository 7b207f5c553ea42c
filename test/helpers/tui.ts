/**
 * Helpers for the client / TUI tests:
 *  - event and batch builders;
 *  - FakeServer: a small in-process protocol v1 server (hello, attach with replay or
 *    after_sequence, history, submit, sessions) whose journal the test appends to, and
 *    which can drop connections or restart on the same port;
 *  - Tmux: drive a command in a detached tmux session (send keys, capture the screen).
 */
import { execFileSync } from 'node:child_process';
import type { AddressInfo } from 'node:net';
import { WebSocketServer, type WebSocket } from 'ws';
import type { BatchFrame, Event, EventMsg, SessionDescriptor } from '../../protocol/index.js';

// ---------- builders ----------

export function ev(msg: EventMsg, extra: Partial<Omit<Event, 'msg'>> = {}): Event {
  return { submission_id: null, turn_id: null, ts: 1_700_000_000_000, ...extra, msg };
}

export function batch(sequence: number, events: Event[], sessionId = 's1'): BatchFrame {
  return { type: 'batch', session_id: sessionId, sequence, committed_at: 1_700_000_000_000 + sequence, events };
}

export function descriptor(patch: Partial<SessionDescriptor> = {}): SessionDescriptor {
  return {
    session_id: 's1',
    title: null,
    created_at: 1_700_000_000_000,
    updated_at: 1_700_000_000_000,
    status: 'idle',
    model: { route: 'scripted', model: 'scripted', reasoning_effort: null, context_window: null },
    cwd: '/work',
    approval_policy: 'ask',
    head_sequence: 0,
    active_turn_id: null,
    pending_approval: null,
    queued_turns: 0,
    parent_session_id: null,
    parent_call_id: null,
    pending_child_approval: null,
    token_budget: null,
    ...patch,
  };
}

/** The events of a simple turn answering `text` (turn id `t`). */
export function echoTurn(text: string, t = 't1', sub = 'u1'): Event[][] {
  const tags = { submission_id: sub, turn_id: t };
  return [
    [ev({ type: 'user_message', text, mode: 'turn' }, { submission_id: sub }), ev({ type: 'turn_started', turn_id: t }, tags)],
    [ev({ type: 'agent_message_delta', delta: 'echo: ' }, tags)],
    [ev({ type: 'agent_message_delta', delta: text }, tags)],
    [
      ev({ type: 'agent_message', text: `echo: ${text}` }, tags),
      ev({ type: 'token_usage', usage: { input_tokens: 3, output_tokens: 4 }, total: { input_tokens: 3, output_tokens: 4 } }, tags),
      ev(
        {
          type: 'turn_complete',
          last_message: `echo: ${text}`,
          model_calls: 1,
          tool_calls: 0,
          failed_tool_calls: 0,
          usage: { input_tokens: 3, output_tokens: 4 },
          duration_ms: 12,
        },
        tags,
      ),
    ],
  ];
}

// ---------- fake server ----------

interface FakeSession {
  descriptor: SessionDescriptor;
  batches: BatchFrame[];
}

/** Every frame a client sent, with the connection number. */
export interface Received {
  conn: number;
  frame: Record<string, unknown>;
}

export class FakeServer {
  readonly sessions = new Map<string, FakeSession>();
  readonly received: Received[] = [];
  /** Tokens accepted (none = any). */
  token: string | null = null;
  /** Called for each submit; default answers queued. Return false to answer an error. */
  onSubmit: (sessionId: string, submission: { id: string; op: Record<string, unknown> }) => void = () => {};
  private wss!: WebSocketServer;
  private readonly attached = new Map<WebSocket, Set<string>>();
  private connCount = 0;
  port = 0;

  static async start(port = 0): Promise<FakeServer> {
    const s = new FakeServer();
    await s.listen(port);
    return s;
  }

  get url(): string {
    return `ws://127.0.0.1:${this.port}`;
  }

  get connections(): number {
    return this.connCount;
  }

  private listen(port: number): Promise<void> {
    return new Promise((resolve, reject) => {
      const wss = new WebSocketServer({ host: '127.0.0.1', port, path: '/v1' });
      wss.once('error', reject);
      wss.once('listening', () => {
        this.port = (wss.address() as AddressInfo).port;
        resolve();
      });
      wss.on('connection', (ws) => this.onConnection(ws));
      this.wss = wss;
    });
  }

  addSession(d: Partial<SessionDescriptor> = {}): FakeSession {
    const s: FakeSession = { descriptor: descriptor(d), batches: [] };
    this.sessions.set(s.descriptor.session_id, s);
    return s;
  }

  /** Commit a batch to a session's journal and send it to attached clients. */
  commit(sessionId: string, events: Event[]): BatchFrame {
    const b = this.commitSilently(sessionId, events);
    for (const [ws, ids] of this.attached) if (ids.has(sessionId)) ws.send(JSON.stringify(b));
    return b;
  }

  /** Append a batch to the journal without sending it to anyone (a "lost" live batch). */
  commitSilently(sessionId: string, events: Event[]): BatchFrame {
    const s = this.sessions.get(sessionId)!;
    const b = batch(s.batches.length + 1, events, sessionId);
    s.batches.push(b);
    let d: SessionDescriptor = { ...s.descriptor, head_sequence: b.sequence, updated_at: s.descriptor.updated_at + 1 };
    // Keep the descriptor's live status in step, as the daemon does.
    for (const e of events) {
      const m = e.msg;
      if (m.type === 'turn_started') d = { ...d, status: 'running', active_turn_id: m.turn_id };
      if (m.type === 'exec_approval_request') d = { ...d, status: 'awaiting_approval', pending_approval: m };
      if (m.type === 'approval_resolved') d = { ...d, status: d.active_turn_id ? 'running' : 'idle', pending_approval: null };
      if (m.type === 'turn_complete' || m.type === 'turn_interrupted' || m.type === 'turn_failed') {
        d = { ...d, status: 'idle', active_turn_id: null, pending_approval: null };
      }
    }
    s.descriptor = d;
    return b;
  }

  /** Send a raw frame to every connection attached to the session (e.g. a duplicate). */
  sendRaw(sessionId: string, frame: unknown): void {
    for (const [ws, ids] of this.attached) if (ids.has(sessionId)) ws.send(JSON.stringify(frame));
  }

  /** Terminate every connection (like a crash, from the client's point of view). */
  dropAll(): void {
    for (const ws of this.wss.clients) ws.terminate();
  }

  async stop(): Promise<void> {
    this.dropAll();
    await new Promise<void>((resolve) => this.wss.close(() => resolve()));
  }

  /** Listen again on the same port (after stop). */
  async restart(): Promise<void> {
    await this.listen(this.port);
  }

  private onConnection(ws: WebSocket): void {
    const conn = ++this.connCount;
    let helloDone = false;
    this.attached.set(ws, new Set());
    ws.on('close', () => this.attached.delete(ws));
    const send = (f: unknown) => ws.send(JSON.stringify(f));
    ws.on('message', (data) => {
      const frame = JSON.parse(data.toString()) as Record<string, unknown> & { type: string; req_id?: string };
      this.received.push({ conn, frame });
      if (!helloDone) {
        if (frame.type !== 'hello') {
          send({ type: 'error', code: 'protocol', message: 'expected hello' });
          ws.close(4400);
          return;
        }
        if (this.token !== null && frame.token !== this.token) {
          send({ type: 'error', code: 'unauthorized', message: 'bad token' });
          ws.close(4401);
          return;
        }
        helloDone = true;
        send({ type: 'welcome', protocol: 1, server: 'fake/1.0' });
        return;
      }
      const req_id = frame.req_id;
      const session = typeof frame.session_id === 'string' ? this.sessions.get(frame.session_id) : undefined;
      const unknown = () =>
        send({ type: 'error', code: 'unknown_session', message: `no session ${String(frame.session_id)}`, req_id });
      switch (frame.type) {
        case 'list_sessions':
          send({ type: 'sessions', req_id, sessions: [...this.sessions.values()].map((s) => s.descriptor), next_before: null });
          return;
        case 'create_session': {
          const id = `s${this.sessions.size + 1}-new`;
          const s = this.addSession({ session_id: id });
          send({ type: 'session_created', req_id, session: s.descriptor });
          return;
        }
        case 'attach': {
          if (!session) return unknown();
          this.attached.get(ws)!.add(session.descriptor.session_id);
          let toSend: BatchFrame[];
          let nextBefore: number | null;
          if (typeof frame.after_sequence === 'number') {
            const after = frame.after_sequence;
            toSend = session.batches.filter((b) => b.sequence > after);
            nextBefore = toSend[0]?.sequence ?? null;
          } else {
            const n = typeof frame.replay_batches === 'number' ? frame.replay_batches : 100;
            toSend = n === 0 ? [] : session.batches.slice(-n);
            nextBefore = toSend.length > 0 && toSend[0]!.sequence > 1 ? toSend[0]!.sequence : null;
          }
          send({ type: 'attached', req_id, session: session.descriptor, head_sequence: session.batches.length, next_before_sequence: nextBefore });
          for (const b of toSend) send(b);
          return;
        }
        case 'detach':
          this.attached.get(ws)!.delete(String(frame.session_id));
          send({ type: 'detached', req_id, session_id: frame.session_id });
          return;
        case 'history': {
          if (!session) return unknown();
          const before = Number(frame.before_sequence);
          const limit = typeof frame.limit === 'number' ? frame.limit : 100;
          const older = session.batches.filter((b) => b.sequence < before).slice(-limit);
          const first = older[0]?.sequence ?? 1;
          send({ type: 'history', req_id, session_id: frame.session_id, batches: older, next_before_sequence: first > 1 ? first : null });
          return;
        }
        case 'submit': {
          const sub = frame.submission as { id: string; op: Record<string, unknown> };
          if (!session) {
            send({ type: 'error', code: 'unknown_session', message: 'no such session', submission_id: sub.id });
            return;
          }
          send({ type: 'queued', session_id: frame.session_id, submission_id: sub.id, ingress_seq: this.received.length });
          this.onSubmit(String(frame.session_id), sub);
          return;
        }
        default:
          send({ type: 'error', code: 'invalid_frame', message: `unknown frame ${frame.type}`, req_id });
      }
    });
  }
}

// ---------- polling ----------

export async function waitFor<T>(
  check: () => T | undefined | null | false,
  what: string,
  timeoutMs = 10_000,
  intervalMs = 20,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = check();
    if (v) return v;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, intervalMs));
  }
}

// ---------- tmux ----------

export function hasTmux(): boolean {
  try {
    execFileSync('tmux', ['-V'], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}

/** A command running in a detached tmux session of a fixed size, on a private tmux server. */
export class Tmux {
  readonly socket: string;

  constructor(
    readonly name: string,
    readonly width = 100,
    readonly height = 32,
  ) {
    this.socket = `agentd-test-${process.pid}-${name}`;
  }

  private tmux(args: string[]): string {
    return execFileSync('tmux', ['-L', this.socket, ...args], { encoding: 'utf8' });
  }

  /** Start `command` (a shell string) in the session. */
  start(command: string, options: { env?: Record<string, string>; cwd?: string } = {}): void {
    const envArgs = Object.entries(options.env ?? {}).flatMap(([k, v]) => ['-e', `${k}=${v}`]);
    const cwdArgs = options.cwd ? ['-c', options.cwd] : [];
    this.tmux(['-f', '/dev/null', 'new-session', '-d', '-s', this.name, '-x', String(this.width), '-y', String(this.height), ...cwdArgs, ...envArgs, command]);
    this.tmux(['set-option', '-t', this.name, 'escape-time', '10']);
    this.tmux(['set-option', '-t', this.name, 'remain-on-exit', 'on']);
  }

  /** Type literal text (no Enter). */
  type(text: string): void {
    this.tmux(['send-keys', '-t', this.name, '-l', text]);
  }

  /** Send named keys: Enter, Escape, PageUp, C-c… */
  keys(...keys: string[]): void {
    this.tmux(['send-keys', '-t', this.name, ...keys]);
  }

  /** The visible screen, one string per row (trailing spaces trimmed). */
  screen(): string[] {
    return this.tmux(['capture-pane', '-p', '-t', this.name]).split('\n').map((l) => l.trimEnd());
  }

  text(): string {
    return this.screen().join('\n');
  }

  /** The pane's scrollback and visible screen, oldest row first (trailing spaces trimmed). */
  history(): string[] {
    return this.tmux(['capture-pane', '-p', '-S', '-', '-t', this.name]).split('\n').map((l) => l.trimEnd());
  }

  /** Whether the command has exited (remain-on-exit keeps the pane). */
  dead(): boolean {
    return this.tmux(['display-message', '-p', '-t', this.name, '#{pane_dead}']).trim() === '1';
  }

  async waitForText(pattern: RegExp | string, timeoutMs = 10_000): Promise<string> {
    const test = (s: string) => (typeof pattern === 'string' ? s.includes(pattern) : pattern.test(s));
    try {
      return await waitFor(
        () => {
          const t = this.text();
          return test(t) ? t : null;
        },
        `screen to show ${String(pattern)}`,
        timeoutMs,
        100,
      );
    } catch (err) {
      throw new Error(`${(err as Error).message}\n--- screen ---\n${this.text()}`);
    }
  }

  kill(): void {
    try {
      this.tmux(['kill-server']);
    } catch {
      /* already gone */
    }
  }
}
