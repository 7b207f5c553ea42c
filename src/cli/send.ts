/**
 * `agentd send SESSION_ID TEXT`: submit one message and print its events until that
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
import { createInterface } from 'node:readline/promises';
import { Command, Option } from 'commander';
import type { ApprovalDecision, BatchFrame, Event, ExecApprovalRequestMsg } from '../../protocol/index.js';
import { newSubmissionId, type AgentdClient } from '../client/client.js';
import { addConnectionOptions, connectClient, type ConnectionFlags } from './connect.js';
import { CliExit, EXIT, attachFailure, runCliCommand } from './exit.js';
import { ConnectionError, describeError } from '../client/errors.js';
import { PlainPrinter } from '../render/plain.js';
import { packageVersion } from './version.js';

export interface SendFlags extends ConnectionFlags {
  json?: boolean;
  approve?: boolean;
  deny?: boolean;
  mode?: 'queue' | 'steer';
  id?: string;
}

export function registerSend(program: Command): void {
  const cmd = new Command('send')
    .description('send one message to a session and print its events until the turn ends')
    .argument('<session_id>', 'session to send to')
    .argument('<text>', 'message text ("-" reads it from stdin)')
    .option('--json', 'print the turn\'s events as JSON lines on stdout')
    .addOption(new Option('--approve', 'approve every approval request of the turn').conflicts('deny'))
    .addOption(new Option('--deny', 'deny every approval request of the turn').conflicts('approve'))
    .addOption(new Option('--mode <mode>', 'while a turn runs: queue a new turn, or steer the running one').choices(['queue', 'steer']))
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

Exit codes: 0 turn completed, 1 turn failed or interrupted, 2 usage or connection error,
130 detached with Ctrl-C (the turn keeps running).`,
    );
  addConnectionOptions(cmd);
  cmd.action((sessionId: string, text: string, flags: SendFlags) =>
    runCliCommand('send', () => send(sessionId, text, flags)),
  );
  program.addCommand(cmd);
}

function readText(text: string): string {
  if (text !== '-') return text;
  const data = readFileSync(0, 'utf8');
  return data.replace(/\n$/, '');
}

async function send(sessionId: string, rawText: string, flags: SendFlags): Promise<number> {
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
    return await followTurn(client, sessionId, text, flags, printer, interactive);
  } finally {
    printer.finish();
    client.close();
  }
}

async function followTurn(
  client: AgentdClient,
  sessionId: string,
  text: string,
  flags: SendFlags,
  printer: PlainPrinter,
  interactive: boolean,
): Promise<number> {
  const submissionId = flags.id ?? newSubmissionId('send');
  let turnId: string | null = null;
  let pendingPrompt: AbortController | null = null;
  let settle!: (code: number) => void;
  let fail!: (err: Error) => void;
  const done = new Promise<number>((resolve, reject) => {
    settle = resolve;
    fail = reject;
  });

  const emit = (b: BatchFrame, ev: Event) => {
    if (flags.json) {
      process.stdout.write(`${JSON.stringify({ session_id: b.session_id, sequence: b.sequence, ...ev })}\n`);
    } else {
      printer.event(ev);
    }
  };

  const answer = async (req: ExecApprovalRequestMsg, decision: ApprovalDecision) => {
    try {
      await client.submit(sessionId, { id: newSubmissionId('send'), op: { type: 'exec_approval', id: req.approval_id, decision } });
    } catch (err) {
      printer.note(`could not answer the approval: ${describeError(err)}`, 'red');
    }
  };

  const onApproval = (req: ExecApprovalRequestMsg) => {
    if (flags.approve) {
      void answer(req, 'approve');
    } else if (flags.deny) {
      void answer(req, 'deny');
    } else if (interactive) {
      pendingPrompt?.abort();
      const ac = new AbortController();
      pendingPrompt = ac;
      void askApproval(ac.signal).then((decision) => {
        if (pendingPrompt === ac) pendingPrompt = null;
        if (decision) void answer(req, decision);
      });
    } else {
      printer.note(`waiting for approval — answer it in "agentd attach ${sessionId}" (or use --approve / --deny)`, 'yellow');
    }
  };

  const offBatch = client.events.on('batch', (b) => {
    if (b.session_id !== sessionId) return;
    for (const ev of b.events) {
      const ours = ev.submission_id === submissionId || (turnId !== null && ev.turn_id === turnId);
      if (!ours) continue;
      if (turnId === null && ev.turn_id !== null) turnId = ev.turn_id;
      emit(b, ev);
      const m = ev.msg;
      if (m.type === 'exec_approval_request') onApproval(m);
      if (m.type === 'approval_resolved' && pendingPrompt) {
        pendingPrompt.abort();
        pendingPrompt = null;
      }
      if (turnId !== null && ev.turn_id === turnId) {
        if (m.type === 'turn_complete') settle(EXIT.ok);
        if (m.type === 'turn_interrupted' || m.type === 'turn_failed') settle(EXIT.turnFailed);
      }
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
    try {
      await client.attach(sessionId, { replayBatches: 0 });
    } catch (err) {
      throw attachFailure(err, sessionId);
    }

    const op: { type: 'message'; text: string; mode?: 'queue' | 'steer' } = { type: 'message', text };
    if (flags.mode) op.mode = flags.mode;
    // Submit, re-sending the same id after a reconnect (the daemon deduplicates it).
    for (;;) {
      try {
        await client.submit(sessionId, { id: submissionId, op });
        break;
      } catch (err) {
        if (err instanceof ConnectionError && err.retryable) {
          await client.waitConnected().catch((e: unknown) => {
            throw new CliExit(`lost the connection to the daemon: ${describeError(e)}`);
          });
          continue;
        }
        throw new CliExit(`message rejected: ${describeError(err)}`);
      }
    }
    return await done;
  } finally {
    (pendingPrompt as AbortController | null)?.abort();
    process.off('SIGINT', onSigint);
    offBatch();
    offState();
    offError();
  }
}

const ANSWERS: Record<string, ApprovalDecision> = {
  y: 'approve',
  yes: 'approve',
  a: 'approve_for_session',
  always: 'approve_for_session',
  n: 'deny',
  no: 'deny',
  x: 'abort',
  abort: 'abort',
};

/** Ask on the terminal; null when aborted (answered elsewhere, or the turn ended). */
async function askApproval(signal: AbortSignal): Promise<ApprovalDecision | null> {
  const rl = createInterface({ input: process.stdin, output: process.stderr });
  rl.on('SIGINT', () => process.emit('SIGINT'));
  try {
    for (;;) {
      const reply = (await rl.question('approve? [y]es / [a]lways (this session) / [n]o / [x] abort turn: ', { signal }))
        .trim()
        .toLowerCase();
      const decision = ANSWERS[reply];
      if (decision) return decision;
    }
  } catch {
    return null;
  } finally {
    rl.close();
  }
}
