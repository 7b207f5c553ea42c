/**
 * `agentd rm SESSION [--force]`: delete a session, its subagent sessions and everything
 * the journal holds of them (docs/sessions.md#deleting-sessions). Prints the deleted ids.
 *
 * Exit codes: 0 deleted; 2 usage / connection errors / no such session; 3 the session has
 * a running or waiting turn (retry with --force, which interrupts it first).
 */
import { Command } from 'commander';
import { ServerError } from '../client/errors.js';
import { addConnectionOptions, connectClient, type ConnectionFlags } from './connect.js';
import { CliExit, EXIT, runCliCommand } from './exit.js';
import { packageVersion } from './version.js';

interface RmFlags extends ConnectionFlags {
  force?: boolean;
}

export function registerRm(program: Command): void {
  const cmd = new Command('rm')
    .description('delete a session and its subagent sessions for good')
    .argument('<session>', 'the session id')
    .option('-f, --force', 'interrupt a running or waiting turn first instead of refusing')
    .version(packageVersion(), '-V, --version', 'print the version');
  addConnectionOptions(cmd);
  cmd.action((sessionId: string, flags: RmFlags) => runCliCommand('rm', () => rm(sessionId, flags)));
  program.addCommand(cmd);
}

async function rm(sessionId: string, flags: RmFlags): Promise<number> {
  const client = await connectClient(flags, `agentd-cli/${packageVersion()}`, { maxReconnectAttempts: 0 });
  try {
    const done = await client.deleteSession(sessionId, { force: flags.force ?? false });
    process.stdout.write(`deleted ${(done.deleted_session_ids ?? [sessionId]).join(' ')}\n`);
    return EXIT.ok;
  } catch (err) {
    if (err instanceof ServerError && err.code === 'unknown_session') {
      throw new CliExit(`no session ${sessionId} (list them with "agentd sessions")`);
    }
    if (err instanceof ServerError && err.code === 'busy') {
      throw new CliExit(`${err.message} (agentd rm --force ${sessionId} interrupts it)`, EXIT.busy);
    }
    throw err;
  } finally {
    client.close();
  }
}
