/**
 * The `shell` tool: `/bin/sh -c COMMAND` in the session cwd, in its own process group.
 * Output is streamed as it comes and captured up to a cap (with a truncation note); a
 * timeout or an abort (interrupt) kills the whole group: TERM, then KILL after 2 s.
 * The child's environment has the daemon's secrets removed.
 */
import { spawn } from 'node:child_process';
import type { OutputStream } from '../../protocol/index.js';
import type { Tool, ToolContext, ToolResult } from './types.js';

export interface ShellOptions {
  /** Default timeout when the call gives none. */
  timeoutMs: number;
  /** Bytes of output kept for the result (and streamed). */
  outputCapBytes: number;
  /** Environment variable names never passed on (e.g. routes' api_key_env). */
  secretEnv?: readonly string[];
}

const KILL_GRACE_MS = 2000;

/** Process groups of shell calls still running, with a way to learn when each is gone. */
const running = new Map<number, Promise<void>>();

/**
 * Wait until every shell process group still running is gone; whatever is left after the
 * grace period is KILLed. Called at shutdown, after the sessions stopped (which sent TERM),
 * so no tool outlives the daemon.
 */
export async function reapShellProcesses(graceMs = KILL_GRACE_MS): Promise<void> {
  if (running.size === 0) return;
  let timer: NodeJS.Timeout | undefined;
  const grace = new Promise<void>((resolve) => (timer = setTimeout(resolve, graceMs)));
  await Promise.race([Promise.all(running.values()), grace]);
  clearTimeout(timer);
  for (const pid of running.keys()) {
    try {
      process.kill(-pid, 'SIGKILL');
    } catch {
      /* gone */
    }
  }
}
const SECRET_NAME = /(^AGENTD_|_API_KEY$|_KEY$|_TOKEN$|SECRET|PASSWORD)/i;

/** The daemon's environment minus anything that looks like a secret. */
export function childEnv(secretEnv: readonly string[] = []): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [k, v] of Object.entries(process.env)) {
    if (!SECRET_NAME.test(k) && !secretEnv.includes(k)) env[k] = v;
  }
  return env;
}

/** Kill a process group: TERM now, KILL after the grace period if anything is left. */
export function killGroup(pid: number): void {
  try {
    process.kill(-pid, 'SIGTERM');
  } catch {
    return; // already gone
  }
  setTimeout(() => {
    try {
      process.kill(-pid, 'SIGKILL');
    } catch {
      /* gone */
    }
  }, KILL_GRACE_MS).unref();
}

export function createShellTool(options: ShellOptions): Tool {
  return {
    needsApproval: true,
    spec: {
      name: 'shell',
      description: 'Run a shell command (/bin/sh -c) in the session working directory. Returns combined stdout/stderr and the exit code.',
      parameters: {
        type: 'object',
        properties: {
          command: { type: 'string', description: 'The command line to run.' },
          timeout_ms: { type: 'number', description: 'Kill the command after this many milliseconds.' },
        },
        required: ['command'],
        additionalProperties: false,
      },
    },
    run: (args, ctx) => runShell(args, ctx, options),
  };
}

function runShell(args: Record<string, unknown>, ctx: ToolContext, options: ShellOptions): Promise<ToolResult> {
  const command = args.command;
  if (typeof command !== 'string' || command.length === 0) {
    return Promise.resolve({ status: 'error', output: 'shell: "command" must be a non-empty string' });
  }
  const timeoutArg = args.timeout_ms;
  const timeoutMs =
    typeof timeoutArg === 'number' && Number.isFinite(timeoutArg) && timeoutArg > 0 ? timeoutArg : options.timeoutMs;

  return new Promise<ToolResult>((resolve) => {
    const child = spawn('/bin/sh', ['-c', command], {
      cwd: ctx.cwd,
      detached: true,
      env: childEnv(options.secretEnv),
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const pid = child.pid;
    if (pid) running.set(pid, new Promise<void>((done) => child.once('close', () => done())));
    let kept = 0;
    let truncated = false;
    const parts: string[] = [];
    let ended: 'timeout' | 'interrupted' | null = null;

    const onData = (stream: OutputStream) => (buf: Buffer) => {
      if (kept >= options.outputCapBytes) {
        truncated = true;
        return;
      }
      const room = options.outputCapBytes - kept;
      const slice = buf.length > room ? buf.subarray(0, room) : buf;
      if (slice.length < buf.length) truncated = true;
      kept += slice.length;
      const text = slice.toString('utf8');
      parts.push(text);
      ctx.onOutput(stream, text);
    };
    child.stdout!.on('data', onData('stdout'));
    child.stderr!.on('data', onData('stderr'));

    const stop = (why: 'timeout' | 'interrupted') => {
      if (ended || child.exitCode !== null) return;
      ended = why;
      if (child.pid) killGroup(child.pid);
    };
    const timer = setTimeout(() => stop('timeout'), timeoutMs);
    const onAbort = () => stop('interrupted');
    if (ctx.signal.aborted) onAbort();
    else ctx.signal.addEventListener('abort', onAbort, { once: true });

    child.on('error', (err) => {
      if (pid) running.delete(pid);
      clearTimeout(timer);
      ctx.signal.removeEventListener('abort', onAbort);
      resolve({ status: 'error', output: `shell: cannot run: ${err.message}` });
    });
    child.on('close', (code, signal) => {
      if (pid) running.delete(pid);
      clearTimeout(timer);
      ctx.signal.removeEventListener('abort', onAbort);
      let output = parts.join('');
      if (truncated) output += `\n[output truncated: more than ${options.outputCapBytes} bytes]`;
      if (ended === 'timeout') {
        resolve({ status: 'error', output: `${output}\n[timed out after ${timeoutMs} ms; process group killed]`.trimStart() });
        return;
      }
      const exit_code = code ?? (signal ? 128 + (signalNumber(signal) ?? 0) : -1);
      resolve({ status: exit_code === 0 ? 'ok' : 'error', output, exit_code });
    });
  });
}

function signalNumber(signal: NodeJS.Signals): number | undefined {
  const map: Partial<Record<NodeJS.Signals, number>> = { SIGHUP: 1, SIGINT: 2, SIGKILL: 9, SIGTERM: 15, SIGPIPE: 13 };
  return map[signal];
}
