/**
 * `agentd new [--cwd D] [--route R] [--policy ask|auto] [--title T] [--json]`: create a
 * session and print its id (with --json: its descriptor), for scripts:
 * `sid=$(agentd new --policy auto)`.
 *
 * Exit codes: 0 created, 2 usage / connection / refused (e.g. an unknown route).
 */
import { Command } from 'commander';
import { describeError } from '../client/errors.js';
import { addConnectionOptions, connectClient, type ConnectionFlags } from './connect.js';
import { CliExit, EXIT, runCliCommand } from './exit.js';
import { addNewSessionOptions, newSessionConfig, type NewSessionFlags } from './session-options.js';
import { packageVersion } from './version.js';

interface NewFlags extends ConnectionFlags, NewSessionFlags {
  json?: boolean;
}

export function registerNew(program: Command): void {
  const cmd = new Command('new')
    .description('create a session and print its id')
    .option('--json', 'print the new session\'s descriptor as JSON')
    .version(packageVersion(), '-V, --version', 'print the version')
    .addHelpText('after', '\nExit codes: 0 created, 2 usage or connection error, or the daemon refused the config.');
  addNewSessionOptions(cmd);
  addConnectionOptions(cmd);
  cmd.action((flags: NewFlags) => runCliCommand('new', () => createNew(flags)));
  program.addCommand(cmd);
}

async function createNew(flags: NewFlags): Promise<number> {
  const client = await connectClient(flags, `agentd-cli/${packageVersion()}`, { maxReconnectAttempts: 0 });
  try {
    const session = await client.createSession(newSessionConfig(flags)).catch((err: unknown) => {
      throw new CliExit(`cannot create the session: ${describeError(err)}`);
    });
    process.stdout.write(flags.json ? `${JSON.stringify(session, null, 2)}\n` : `${session.session_id}\n`);
    return EXIT.ok;
  } finally {
    client.close();
  }
}
