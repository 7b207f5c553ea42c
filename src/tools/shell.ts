/**
 * The `shell` tool: `/bin/sh -c COMMAND` in the session cwd, contained (contain.ts) so that
 * no process it starts outlives the call. Output is streamed as it comes and captured up to
 * a cap (with a truncation note). The call lasts as long as /bin/sh runs: when it exits,
 * whatever it left running (background jobs, daemons) is killed at once; a timeout or an
 * abort (interrupt) sends TERM to every process of the call, then KILL after 2 s. The environment is the
 * minimal one of env.ts. The tool belongs to a ShellToolset whose close() ends every call.
 */
import { spawn } from 'node:child_process';
import type { OutputStream } from '../../protocol/index.js';
import { constants } from 'node:os';
import { type Containment, detectContainment } from './contain.js';
import { type EnvPolicy, toolEnv } from './env.js';
import type { Tool, ToolContext, ToolResult } from './types.js';

export interface ShellOptions {
  /** Default timeout when the call gives none. */
  timeoutMs: number;
  /** Bytes of output kept for the result (and streamed). */
  outputCapBytes: number;
  /** The command's environment. */
  env: EnvPolicy;
  /** How the call's processes are contained (default: the best available here). */
  containment?: Containment;
  /** TERM → KILL grace (default 2 s). */
  killGraceMs?: number;
}

/** The shell tool and the calls it is running. */
export interface ShellToolset {
  tool: Tool;
  readonly containment: Containment;
  /** End every running call (TERM, KILL after the grace) and wait until all are gone; later calls are refused. */
  close(): Promise<void>;
}

const KILL_GRACE_MS = 2000;
/** After KILL, how long output pipes held by an escaped process may keep the call open. */
const PIPE_DRAIN_MS = 500;

type Ending = 'timeout' | 'interrupted' | 'shutdown';

/** One running call: a way to end it and a promise settled when it is over. */
interface RunningCall {
  stop(why: Ending): void;
  done: Promise<unknown>;
}

export function createShellTool(options: ShellOptions): ShellToolset {
  const containment = options.containment ?? detectContainment();
  const running = new Set<RunningCall>();
  let closed = false;
  const tool: Tool = {
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
    run(args, ctx) {
      if (closed) return Promise.resolve({ status: 'error', output: 'shell: not run: the daemon is shutting down' });
      return runShell(args, ctx, { ...options, containment }, running);
    },
  };
  return {
    tool,
    containment,
    async close() {
      closed = true;
      const calls = [...running];
      for (const call of calls) call.stop('shutdown');
      await Promise.all(calls.map((c) => c.done));
      containment.dispose();
    },
  };
}

function runShell(
  args: Record<string, unknown>,
  ctx: ToolContext,
  options: ShellOptions & { containment: Containment },
  running: Set<RunningCall>,
): Promise<ToolResult> {
  const command = args.command;
  if (typeof command !== 'string' || command.length === 0) {
    return Promise.resolve({ status: 'error', output: 'shell: "command" must be a non-empty string' });
  }
  const timeoutArg = args.timeout_ms;
  const timeoutMs =
    typeof timeoutArg === 'number' && Number.isFinite(timeoutArg) && timeoutArg > 0 ? timeoutArg : options.timeoutMs;
  const graceMs = options.killGraceMs ?? KILL_GRACE_MS;

  let contained;
  try {
    contained = options.containment.contain(command);
  } catch (err) {
    return Promise.resolve({ status: 'error', output: `shell: cannot run: ${(err as Error).message}` });
  }
  const child = spawn(contained.file, [...contained.args], {
    cwd: ctx.cwd,
    detached: true,
    env: { ...toolEnv(options.env), ...contained.env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  if (child.pid) contained.attach(child.pid);

  let kept = 0;
  let truncated = false;
  const parts: string[] = [];
  let ended: Ending | null = null;
  let finished = false;
  const timers: NodeJS.Timeout[] = [];
  let reaping: Promise<void> | null = null;
  const reap = () => (reaping ??= contained.reap());
  /** Stop waiting for output pipes that a process which escaped containment still holds. */
  const drain = () => timers.push(setTimeout(() => (child.stdout!.destroy(), child.stderr!.destroy()), PIPE_DRAIN_MS));

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

  const stop = (why: Ending) => {
    if (finished || ended) return;
    ended = why;
    contained.signal('SIGTERM');
    timers.push(
      setTimeout(() => {
        contained.signal('SIGKILL');
        drain();
      }, graceMs),
    );
  };
  timers.push(setTimeout(() => stop('timeout'), timeoutMs));
  const onAbort = () => stop('interrupted');
  if (ctx.signal.aborted) onAbort();
  else ctx.signal.addEventListener('abort', onAbort, { once: true });

  const promise = new Promise<ToolResult>((resolve) => {
    const finish = async (result: () => ToolResult) => {
      if (finished) return;
      finished = true;
      for (const t of timers) clearTimeout(t);
      ctx.signal.removeEventListener('abort', onAbort);
      // Nothing the command started outlives the call.
      await reap();
      resolve(result());
    };
    // The shell is gone: kill what it left (its output pipes close with them).
    child.on('exit', () => void reap().then(() => !finished && drain()));
    child.on('error', (err) => void finish(() => ({ status: 'error', output: `shell: cannot run: ${err.message}` })));
    child.on('close', (code, signal) =>
      void finish(() => {
        let output = parts.join('');
        if (truncated) output += `\n[output truncated: more than ${options.outputCapBytes} bytes]`;
        if (ended === 'timeout') {
          return { status: 'error', output: `${output}\n[timed out after ${timeoutMs} ms; the command and every process it started were killed]`.trimStart() };
        }
        if (ended === 'shutdown') return { status: 'error', output: `${output}\n[killed: the daemon is shutting down]`.trimStart() };
        const exit_code = code ?? (signal ? 128 + (constants.signals[signal] ?? 0) : -1);
        return { status: exit_code === 0 ? 'ok' : 'error', output, exit_code };
      }),
    );
  });
  const call: RunningCall = { stop, done: promise };
  running.add(call);
  void promise.finally(() => running.delete(call));
  return promise;
}
