/**
 * The stdio transport for MCP servers (an SDK `Transport`): the server runs under the
 * supervisor (supervisor.ts) in its own process group, in the given cwd with exactly the
 * given environment. Closing ends the whole group (TERM, then KILL after 2 s); so does the
 * server exiting (leftover descendants are KILLed). Lines on stdout that are not JSON-RPC
 * are counted and the first is kept for error messages; stderr keeps a short tail.
 * Lines are read in time linear in their length (the chunks of a line are kept in a list
 * and joined once); a line longer than `maxMessageBytes` (`mcp.max_message_bytes`)
 * ends the server, and the reason is part of its diagnostics. A flood of
 * `notifications/tools/list_changed` costs little: of those read together (one chunk of
 * the pipe) only the first is passed on — the re-list they ask for is the same.
 * The SDK's own StdioClientTransport cannot do process groups, hence this one.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { serializeMessage } from '@modelcontextprotocol/sdk/shared/stdio.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import { JSONRPCMessageSchema, type JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';
import { killGroup, liveGroups } from './groups.js';
import { SUPERVISOR_GRACE_MS, SUPERVISOR_SOURCE } from './supervisor.js';

const STDERR_TAIL_BYTES = 2048;
/** Lines of stderr quoted in an error message. */
const STDERR_TAIL_LINES = 3;
/** How long the pipes may stay open after the supervisor exited (for the last stderr lines). */
const PIPE_DRAIN_MS = 1000;

export interface StdioServerSpec {
  command: string;
  args: readonly string[];
  cwd: string;
  env: Readonly<Record<string, string>>;
  /** The longest line (one JSON-RPC message) read from stdout, in bytes. */
  maxMessageBytes: number;
}

export interface ExitInfo {
  code: number | null;
  signal: NodeJS.Signals | null;
}

export class StdioProcessTransport implements Transport {
  onclose?: () => void;
  onerror?: (error: Error) => void;
  onmessage?: (message: JSONRPCMessage) => void;

  private child: ChildProcess | undefined;
  /** The chunks of the line being read (no newline yet), and their total length. */
  private partial: Buffer[] = [];
  private partialBytes = 0;
  private overflow: string | undefined;
  /** A list_changed notification was already passed on from the chunk being read. */
  private listChangedInChunk: string | undefined;
  private stderr = '';
  private noise = 0;
  private firstNoise: string | undefined;
  private exitInfo: ExitInfo | undefined;
  private exited: Promise<void> | undefined;

  constructor(private readonly spec: StdioServerSpec) {}

  /** The process group id (the supervisor's pid), once started. */
  get pgid(): number | undefined {
    return this.child?.pid;
  }

  get exit(): ExitInfo | undefined {
    return this.exitInfo;
  }

  /** What the server last wrote to stderr, and about non-JSON-RPC lines on stdout. */
  diagnostics(): string {
    const parts: string[] = [];
    if (this.overflow) parts.push(this.overflow);
    const tail = this.stderr.trim();
    if (tail) parts.push(`stderr: ${tail.split('\n').slice(-STDERR_TAIL_LINES).map((l) => l.trim().slice(0, 200)).join(' | ')}`);
    if (this.noise > 0) parts.push(`${this.noise} line(s) on stdout that are not JSON-RPC, the first: ${JSON.stringify(this.firstNoise!.slice(0, 120))}`);
    return parts.join('; ');
  }

  start(): Promise<void> {
    if (this.child) throw new Error('StdioProcessTransport already started');
    if (!existsSync(this.spec.cwd)) return Promise.reject(new Error(`working directory ${this.spec.cwd} does not exist`));
    return new Promise((resolve, reject) => {
      const child = spawn(process.execPath, ['--input-type=commonjs', '-e', SUPERVISOR_SOURCE, '--', this.spec.command, ...this.spec.args], {
        cwd: this.spec.cwd,
        env: { ...this.spec.env },
        detached: true,
        stdio: ['pipe', 'pipe', 'pipe'],
      });
      this.child = child;
      this.exited = new Promise((done) => child.once('close', () => done()));
      child.once('error', (err) => {
        reject(err);
        this.onerror?.(err);
      });
      child.once('spawn', () => {
        if (child.pid !== undefined) liveGroups.add(child.pid);
        resolve();
      });
      // 'close' waits for the pipes; a process outside the group holding them must not keep it open.
      child.once('exit', () => {
        setTimeout(() => {
          child.stdin?.destroy();
          child.stdout?.destroy();
          child.stderr?.destroy();
        }, PIPE_DRAIN_MS).unref();
      });
      child.once('close', (code, signal) => {
        this.exitInfo = { code, signal };
        if (child.pid !== undefined) {
          killGroup(child.pid, 'SIGKILL'); // whatever the server left behind
          liveGroups.delete(child.pid);
        }
        this.onclose?.();
      });
      child.stdin!.on('error', (err) => this.onerror?.(err));
      child.stdout!.on('data', (chunk: Buffer) => this.receive(chunk));
      child.stderr!.on('data', (chunk: Buffer) => {
        this.stderr = (this.stderr + chunk.toString('utf8')).slice(-STDERR_TAIL_BYTES);
      });
    });
  }

  private receive(chunk: Buffer): void {
    if (this.overflow) return;
    this.listChangedInChunk = undefined;
    let start = 0;
    for (let nl = chunk.indexOf(10); nl !== -1; nl = chunk.indexOf(10, start)) {
      if (!this.keep(chunk.subarray(start, nl))) return;
      const whole = this.partial.length === 1 ? this.partial[0]! : Buffer.concat(this.partial, this.partialBytes);
      this.partial = [];
      this.partialBytes = 0;
      start = nl + 1;
      this.line(whole.toString('utf8').replace(/\r$/, ''));
    }
    if (start < chunk.length) this.keep(chunk.subarray(start));
  }

  /** Add a piece to the line being read; false (and the server is ended) past the limit. */
  private keep(piece: Buffer): boolean {
    this.partialBytes += piece.length;
    if (this.partialBytes > this.spec.maxMessageBytes) {
      this.partial = [];
      this.partialBytes = 0;
      this.overflow = `it wrote a message (line) longer than mcp.max_message_bytes (${this.spec.maxMessageBytes} bytes) to stdout`;
      this.onerror?.(new Error(`MCP server ${this.overflow}`));
      void this.close();
      return false;
    }
    this.partial.push(piece);
    return true;
  }

  private line(line: string): void {
    if (line === this.listChangedInChunk || line.trim() === '') return;
    let message: JSONRPCMessage;
    try {
      const parsed: unknown = JSON.parse(line);
      if (isListChanged(parsed)) {
        if (this.listChangedInChunk !== undefined) return;
        this.listChangedInChunk = line;
      }
      message = JSONRPCMessageSchema.parse(parsed);
    } catch {
      this.noise += 1;
      this.firstNoise ??= line;
      return;
    }
    this.onmessage?.(message);
  }

  send(message: JSONRPCMessage): Promise<void> {
    return new Promise((resolve, reject) => {
      const stdin = this.child?.stdin;
      if (!stdin || this.exitInfo || stdin.destroyed) {
        reject(new Error('MCP server process is not running'));
        return;
      }
      if (stdin.write(serializeMessage(message))) resolve();
      else stdin.once('drain', () => resolve());
    });
  }

  /** End the server's process group: TERM, KILL after the grace period; resolves when it is gone. */
  async close(): Promise<void> {
    const child = this.child;
    if (!child || this.exitInfo) return;
    const pgid = child.pid!;
    child.stdin?.end();
    killGroup(pgid, 'SIGTERM');
    let timer: NodeJS.Timeout | undefined;
    const grace = new Promise<void>((resolve) => (timer = setTimeout(resolve, SUPERVISOR_GRACE_MS)));
    await Promise.race([this.exited, grace]);
    clearTimeout(timer);
    killGroup(pgid, 'SIGKILL');
    await this.exited;
  }
}

function isListChanged(value: unknown): boolean {
  const v = value as { method?: unknown; id?: unknown } | null;
  return typeof v === 'object' && v !== null && v.method === 'notifications/tools/list_changed' && v.id === undefined;
}
