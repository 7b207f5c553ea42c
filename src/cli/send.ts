/**
 * `agentd send SESSION_ID TEXT` (or `agentd send --new TEXT`, creating the session first): submit one message and print its events until that
 * message's turn ends. The agent's reply goes to stdout, progress (tool calls, output,
 * approvals, the turn's end) to stderr; `--json` prints every event of the turn as one
 * JSON line on stdout instead.
 *
 * Approvals: `--approve` approves every request of the turn, `--deny` denies them;
 * otherwise an interactive terminal is asked ([y]es / [a]lways / [n]o / [x] abort), and
 * a non-interactive run prints the request and waits until another frontend answers it.
 *
 * The submission id is generated here; on a lost connection the client reconnects,
 * resumes the stream after the last sequence it saw and re-sends the same id (the daemon
 * deduplicates it), so nothing is lost or doubled.
 *
 * Exit codes: 0 turn_complete, 1 turn_failed / turn_interrupted, 2 usage / connection /
 * rejected submission, 130 detached with Ctrl-C (the turn keeps running).
 */
import { readFileSync } from 'node:fs';
import { Command, Option } from 'commander';
import {
  MessageModeSchema,
  type ApprovalDecision,
  type BatchFrame,
  type Event,
  type ExecApprovalRequestMsg,
  type MessageMode,
  type MessageOp,
  type Submission,
} from '../../protocol/index.js';
import { newSubmissionId, type AgentdClient } from '../client/client.js';
import { ConnectionError, describeError } from '../client/errors.js';
import { PlainPrinter } from '../render/plain.js';
import { askApproval } from './ask-approval.js';
import { callLines, lineText } from '../render/call-view.js';
import { addConnectionOptions, connectClient, type ConnectionFlags } from './connect.js';
import { CliExit, EXIT, attachFailure, runCliCommand } from './exit.js';
import { TurnWatch } from './turn-watch.js';
import { addNewSessionOptions, newSessionConfig, type NewSessionFlags } from './session-options.js';
import { packageVersion } from './version.js';

export interface SendFlags extends ConnectionFlags, NewSessionFlags {
  new?: boolean;
  json?: boolean;
  approve?: boolean;
  deny?: boolean;
  mode?: MessageMode;
  id?: string;
}

export function registerSend(program: Command): void {
  const cmd = new Command('send')
    .description('send one message to a session (or a new one with --new) and print its events until the turn ends')
    .usage('[options] SESSION_ID TEXT | --new [options] TEXT')
    .argument('<session_id>', 'session to send to (with --new: the message text)')
    .argument('[text]', 'message text ("-" reads it from stdin)')
    .option('--new', 'create a session first (configured by --cwd, --route, --policy, --title); its id goes to stderr')
    .option('--json', 'print the turn\'s events as JSON lines on stdout')
    .addOption(new Option('--approve', 'approve every approval request of the turn').conflicts('deny'))
    .addOption(new Option('--deny', 'deny every approval request of the turn').conflicts('approve'))
    .addOption(new Option('--mode <mode>', 'while a turn runs: queue a new turn, or steer the running one').choices(MessageModeSchema.options))
    .option('--id <submission_id>', 'submission id (default: generated); re-sending an id is a safe retry')
    .version(packageVersion(), '-V, --version', 'print the version')
    .addHelpText(
      'after',
      `
Output: the agent's reply on stdout; the echoed message, tool calls and output, approvals
and the turn summary on stderr (with --json: every event as a JSON line on stdout).

Approvals (policy "ask"): --approve / --deny answer every request of the turn; without
them a terminal is asked [y]es / [a]lways / [n]o / [x] abort, and a non-interactive run
waits until another frontend (e.g. "agentd attach") answers.

--new creates the session first and prints "session ID" on stderr (with --json, every
event line carries its session_id).

Exit codes: 0 turn completed, 1 turn failed or interrupted, 2 usage or connection error,
130 detached with Ctrl-C (the turn keeps running).`,
    );
  addNewSessionOptions(cmd);
  addConnectionOptions(cmd);
  cmd.action((first: string, second: string | undefined, flags: SendFlags) =>
    runCliCommand('send', () => {
      if (flags.new) {
        if (second !== undefined) throw new CliExit('with --new give only the TEXT (the session is created)');
        return send(null, first, flags);
      }
      if (second === undefined) throw new CliExit('give SESSION_ID and TEXT (or --new TEXT)');
      if (flags.cwd || flags.route || flags.policy || flags.title) throw new CliExit('--cwd, --route, --policy and --title need --new');
      return send(first, second, flags);
    }),
  );
  program.addCommand(cmd);
}

function readText(text: string): string {
  if (text !== '-') return text;
  const data = readFileSync(0, 'utf8');
  return data.replace(/\n$/, '');
}

async function send(given: string | null, rawText: string, flags: SendFlags): Promise<number> {
  const text = readText(rawText);
  if (text === '') throw new CliExit('the message is empty');
  const fromStdin = rawText === '-';
  const interactive = !fromStdin && Boolean(process.stdin.isTTY) && !flags.json;
  const colors = !process.env.NO_COLOR && Boolean(process.stderr.isTTY);
  const printer = new PlainPrinter(process.stdout, process.stderr, colors);

  const client = await connectClient(flags, `agentd-send/${packageVersion()}`, {
    maxReconnectAttempts: 40,
    backoff: { initialMs: 200, maxMs: 2000 },
  });
  try {
    let sessionId = given;
    if (sessionId === null) {
      const created = await client.createSession(newSessionConfig(flags)).catch((err: unknown) => {
        throw new CliExit(`cannot create the session: ${describeError(err)}`);
      });
      sessionId = created.session_id;
      process.stderr.write(`session ${sessionId}\n`);
    }
    return await followTurn(client, sessionId, text, flags, printer, interactive);
  } finally {
    printer.finish();
    client.close();
  }
}

/** Prints the turn's events: JSON lines on stdout with --json, else the plain printer. */
function eventWriter(flags: SendFlags, printer: PlainPrinter): (b: BatchFrame, ev: Event) => void {
  return (b, ev) => {
    if (flags.json) process.stdout.write(`${JSON.stringify({ session_id: b.session_id, sequence: b.sequence, ...ev })}\n`);
    else printer.event(ev);
  };
}

/** The first line of a call longer than the terminal, repeated above the question; else undefined. */
function startReminder(req: ExecApprovalRequestMsg): string | undefined {
  const lines = callLines(req.arguments);
  const rows = process.stderr.rows ?? 24;
  if (lines.length <= Math.max(1, rows - 4)) return undefined;
  return `↑ this call has ${lines.length} lines; it begins: ${lineText(lines[0]!)}`;
}

/**
 * Answers the turn's approval requests: --approve / --deny, else the terminal when
 * interactive, else a note that another frontend must answer. `resolved()` cancels a
 * question answered elsewhere; `cancel()` the open one at the end.
 */
class ApprovalResponder {
  private prompt: AbortController | null = null;

  constructor(
    private readonly client: AgentdClient,
    private readonly sessionId: string,
    private readonly flags: SendFlags,
    private readonly interactive: boolean,
    private readonly printer: PlainPrinter,
  ) {}

  request(req: ExecApprovalRequestMsg): void {
    if (this.flags.approve) return void this.answer(req, 'approve');
    if (this.flags.deny) return void this.answer(req, 'deny');
    if (!this.interactive) {
      this.printer.note(`waiting for approval — answer it with "agentd approve ${this.sessionId}" or in "agentd attach ${this.sessionId}" (or use --approve / --deny)`, 'yellow');
      return;
    }
    this.cancel();
    const ac = new AbortController();
    this.prompt = ac;
    void askApproval(ac.signal, req.tool, startReminder(req)).then((decision) => {
      if (this.prompt === ac) this.prompt = null;
      if (decision) void this.answer(req, decision);
    });
  }

  /** An approval was resolved (here or elsewhere): stop asking. */
  resolved(): void {
    this.cancel();
  }

  cancel(): void {
    this.prompt?.abort();
    this.prompt = null;
  }

  private async answer(req: ExecApprovalRequestMsg, decision: ApprovalDecision): Promise<void> {
    try {
      await this.client.submit(this.sessionId, { id: newSubmissionId('send'), op: { type: 'exec_approval', id: req.approval_id, decision } });
    } catch (err) {
      this.printer.note(`could not answer the approval: ${describeError(err)}`, 'red');
    }
  }
}

/** Submit, re-sending the same id after a reconnect (the daemon deduplicates it). */
async function submitRetrying(client: AgentdClient, sessionId: string, submission: Submission): Promise<void> {
  for (;;) {
    try {
      await client.submit(sessionId, submission);
      return;
    } catch (err) {
      if (!(err instanceof ConnectionError && err.retryable)) throw new CliExit(`message rejected: ${describeError(err)}`);
      await client.waitConnected().catch((e: unknown) => {
        throw new CliExit(`lost the connection to the daemon: ${describeError(e)}`);
      });
    }
  }
}

/** Send the message and print its turn until it ends; resolves with the exit code. */
async function followTurn(
  client: AgentdClient,
  sessionId: string,
  text: string,
  flags: SendFlags,
  printer: PlainPrinter,
  interactive: boolean,
): Promise<number> {
  const submissionId = flags.id ?? newSubmissionId('send');
  const watch = new TurnWatch(submissionId);
  const approvals = new ApprovalResponder(client, sessionId, flags, interactive, printer);
  const write = eventWriter(flags, printer);
  let settle!: (code: number) => void;
  let fail!: (err: Error) => void;
  const done = new Promise<number>((resolve, reject) => {
    settle = resolve;
    fail = reject;
  });

  const offBatch = client.events.on('batch', (b) => {
    if (b.session_id !== sessionId) return;
    for (const ev of b.events) {
      if (!watch.owns(ev)) continue;
      write(b, ev);
      if (ev.msg.type === 'exec_approval_request') approvals.request(ev.msg);
      if (ev.msg.type === 'approval_resolved') approvals.resolved();
      const code = watch.exitCode(ev);
      if (code !== null) settle(code);
    }
  });
  const offState = client.events.on('state', (s) => {
    if (s.kind === 'reconnecting') printer.note(`connection lost (${s.error}); reconnecting…`, 'yellow');
    if (s.kind === 'connected') printer.note('reconnected; resuming', 'gray');
    if (s.kind === 'closed') fail(new CliExit(`lost the connection to the daemon: ${s.error ?? 'closed'}`));
  });
  const offError = client.events.on('error', (e) => {
    if (e.code === 'unknown_session') fail(new CliExit(e.message));
  });
  const onSigint = () => {
    printer.finish();
    process.stderr.write(`detached; the turn keeps running (watch it with "agentd attach ${sessionId}")\n`);
    settle(EXIT.interrupted);
  };
  process.once('SIGINT', onSigint);

  try {
    await client.attach(sessionId, { replayBatches: 0 }).catch((err: unknown) => {
      throw attachFailure(err, sessionId);
    });
    const op: MessageOp = { type: 'message', text };
    if (flags.mode) op.mode = flags.mode;
    await submitRetrying(client, sessionId, { id: submissionId, op });
    return await done;
  } finally {
    approvals.cancel();
    process.off('SIGINT', onSigint);
    offBatch();
    offState();
    offError();
  }
}
