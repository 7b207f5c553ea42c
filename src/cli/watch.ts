/**
 * `agentd watch SESSION [--json] [--replay N]`: print a session's events live until Ctrl-C
 * — replies, tool calls and their output, approvals, turn ends — as plain lines on stdout
 * (`--json`: one JSON line per event, with `session_id` and `sequence`). It follows
 * reconnects and, given several addresses, a failover to another node, resuming after the
 * last batch printed (nothing twice, nothing missed).
 *
 * Exit codes: 0 ended with Ctrl-C, 1 the connection was lost for good, 2 usage /
 * connection / unknown session.
 */
import { Command, InvalidArgumentError } from 'commander';
import { LIMITS } from '../../protocol/index.js';
import { PlainPrinter } from '../render/plain.js';
import { addConnectionOptions, connectClient, type ConnectionFlags } from './connect.js';
import { CliExit, EXIT, runCliCommand } from './exit.js';
import { followSession } from './follow.js';
import { packageVersion } from './version.js';

interface WatchFlags extends ConnectionFlags {
  json?: boolean;
  replay: number;
}

function parseReplay(value: string): number {
  const n = Number(value);
  if (!/^\d+$/.test(value) || n > LIMITS.replayBatchesMax) throw new InvalidArgumentError(`must be an integer from 0 to ${LIMITS.replayBatchesMax}`);
  return n;
}

export function registerWatch(program: Command): void {
  const cmd = new Command('watch')
    .description('print a session\'s events live until Ctrl-C')
    .argument('<session_id>', 'the session to watch')
    .option('--json', 'one JSON line per event (with session_id and sequence)')
    .option('--replay <n>', 'print the last N batches first', parseReplay, 0)
    .version(packageVersion(), '-V, --version', 'print the version')
    .addHelpText('after', '\nExit codes: 0 ended with Ctrl-C, 1 connection lost for good, 2 usage or connection error or unknown session.');
  addConnectionOptions(cmd);
  cmd.action((sessionId: string, flags: WatchFlags) => runCliCommand('watch', () => watch(sessionId, flags)));
  program.addCommand(cmd);
}

async function watch(sessionId: string, flags: WatchFlags): Promise<number> {
  const colors = !process.env.NO_COLOR && Boolean(process.stdout.isTTY) && !flags.json;
  const printer = new PlainPrinter(process.stdout, process.stdout, colors);
  const client = await connectClient(flags, `agentd-watch/${packageVersion()}`, { backoff: { initialMs: 200, maxMs: 2000 } });
  try {
    const following = await followSession(client, sessionId, {
      replayBatches: flags.replay,
      sigintCode: EXIT.ok,
      onSigint: () => printer.finish(),
      onNote: (text) => {
        printer.finish();
        process.stderr.write(`agentd watch: ${text}\n`);
      },
      onEvent: (b, ev) => {
        if (flags.json) process.stdout.write(`${JSON.stringify({ session_id: b.session_id, sequence: b.sequence, ...ev })}\n`);
        else printer.event(ev);
        return null;
      },
    });
    const head = following.attached.head_sequence;
    process.stderr.write(`watching session ${sessionId} (at batch ${head}); Ctrl-C to stop\n`);
    try {
      return await following.done.catch((err: unknown) => {
        // Attached, then lost for good: a different failure from never connecting.
        if (err instanceof CliExit) throw new CliExit(err.message, EXIT.turnFailed);
        throw err;
      });
    } finally {
      following.dispose();
    }
  } finally {
    printer.finish();
    client.close();
  }
}
