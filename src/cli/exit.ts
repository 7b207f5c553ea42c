/**
 * How a client subcommand (attach, send, sessions, new, approve, interrupt, watch) ends: its exit codes, the typed
 * failure that carries one (`CliExit`), and the runner that prints the failure and exits.
 */
import { ServerError, describeError } from '../client/errors.js';

/** Exit codes of the client commands. */
export const EXIT = {
  ok: 0,
  /** The turn failed or was interrupted. */
  turnFailed: 1,
  /** Bad usage, cannot connect, unknown session, submission rejected. */
  usage: 2,
  /** Nothing to act on: no approval pending (`approve`), no turn running (`interrupt`). */
  nothingPending: 3,
  /** `rm`: the session has a running or waiting turn (retry with --force). */
  busy: 3,
  /** Detached with Ctrl-C. */
  interrupted: 130,
} as const;

/** A failure that ends the command with a message and an exit code. */
export class CliExit extends Error {
  constructor(
    message: string,
    readonly exitCode: number = EXIT.usage,
  ) {
    super(message);
    this.name = 'CliExit';
  }
}

/** The CliExit for a failed attach to `sessionId`: an unknown session gets a hint. */
export function attachFailure(err: unknown, sessionId: string | undefined): CliExit {
  if (err instanceof CliExit) return err;
  if (err instanceof ServerError && err.code === 'unknown_session') {
    return new CliExit(`no session ${sessionId ?? ''} (list them with "agentd sessions")`);
  }
  return new CliExit(describeError(err));
}

/** Run a subcommand's body, mapping CliExit and other errors to a message and an exit code. */
export async function runCliCommand(name: string, body: () => Promise<number>): Promise<void> {
  let code: number;
  try {
    code = await body();
  } catch (err) {
    if (err instanceof CliExit) {
      if (err.message) process.stderr.write(`agentd ${name}: ${err.message}\n`);
      code = err.exitCode;
    } else {
      process.stderr.write(`agentd ${name}: ${describeError(err)}\n`);
      code = EXIT.usage;
    }
  }
  process.exitCode = code;
  // Exit even if a handle (a socket in teardown, stdin) would keep the loop alive.
  setTimeout(() => process.exit(code), 250).unref();
}
