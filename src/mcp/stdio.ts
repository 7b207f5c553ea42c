/**
 * The stdio transport for MCP servers (an SDK `Transport`): the server runs under the
 * supervisor (supervisor.ts) in its own process group, in the given cwd with exactly the
 * given environment. Closing ends the whole group (TERM, then KILL after 2 s); so does the
 * server exiting (leftover descendants are KILLed). Lines on stdout that are not JSON-RPC
 * are counted and the first is kept for error messages; stderr keeps a short tail.
 * The SDK's own StdioClientTransport cannot do process groups, hence this one.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { deserializeMessage, serializeMessage } from '@modelcontextprotocol/sdk/shared/stdio.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import type { JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';
import { killGroup, liveGroups } from './groups.js';
import { SUPERVISOR_GRACE_MS, SUPERVISOR_SOURCE } from './supervisor.js';

const STDERR_TAIL_BYTES = 2048;
/** Lines of stderr quoted in an error message. */
const STDERR_TAIL_LINES = 3;
/** How long the pipes may stay open after the supervisor exited (for the last stderr lines). */
const PIPE_DRAIN_MS = 1000;
/** One JSON-RPC message on stdout may be at most this long (the SDK's default buffer). */
const MAX_LINE_BYTES = 10 * 1024 * 1024;

export interface StdioServerSpec {
  command: string;
  args: readonly string[];
  cwd: string;
  env: Readonly<Record<string, string>>;
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
  private pending: Buffer = Buffer.alloc(0);
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
    this.pending = this.pending.length ? Buffer.concat([this.pending, chunk]) : chunk;
    for (let nl = this.pending.indexOf(10); nl !== -1; nl = this.pending.indexOf(10)) {
      const line = this.pending.toString('utf8', 0, nl).replace(/\r$/, '');
      this.pending = this.pending.subarray(nl + 1);
      if (line.trim() === '') continue;
      let message: JSONRPCMessage;
      try {
        message = deserializeMessage(line);
      } catch {
        this.noise += 1;
        this.firstNoise ??= line;
        continue;
      }
      this.onmessage?.(message);
    }
    if (this.pending.length > MAX_LINE_BYTES) {
      this.pending = Buffer.alloc(0);
      this.onerror?.(new Error(`MCP server wrote a line of more than ${MAX_LINE_BYTES} bytes to stdout`));
      void this.close();
    }
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
