/**
 * `agentd sessions`: list sessions, most recently updated first, as a table or JSON.
 *
 * Exit codes: 0 ok, 2 usage / connection errors.
 */
import { Command, InvalidArgumentError } from 'commander';
import { addConnectionOptions, connectClient, type ConnectionFlags } from './connect.js';
import { EXIT, runCliCommand } from './exit.js';
import { formatSessionsTable } from '../render/sessions-table.js';
import { packageVersion } from './version.js';

interface SessionsFlags extends ConnectionFlags {
  json?: boolean;
  limit?: number;
}

function parseLimit(value: string): number {
  const n = Number(value);
  if (!/^\d+$/.test(value) || n < 1) throw new InvalidArgumentError('must be a positive integer');
  return n;
}

export function registerSessions(program: Command): void {
  const cmd = new Command('sessions')
    .description('list sessions, most recently updated first')
    .option('--json', 'print the session descriptors as a JSON array')
    .option('-n, --limit <n>', 'show at most N sessions', parseLimit)
    .version(packageVersion(), '-V, --version', 'print the version');
  addConnectionOptions(cmd);
  cmd.action((flags: SessionsFlags) => runCliCommand('sessions', () => sessions(flags)));
  program.addCommand(cmd);
}

async function sessions(flags: SessionsFlags): Promise<number> {
  const client = await connectClient(flags, `agentd-cli/${packageVersion()}`, { maxReconnectAttempts: 0 });
  try {
    const all = await client.listAllSessions();
    all.sort((a, b) => b.updated_at - a.updated_at);
    const shown = flags.limit ? all.slice(0, flags.limit) : all;
    process.stdout.write(flags.json ? `${JSON.stringify(shown, null, 2)}\n` : formatSessionsTable(shown));
    return EXIT.ok;
  } finally {
    client.close();
  }
}
