/**
 * `agentd sessions`: list sessions, most recently updated first, as a table or JSON.
 *
 * Exit codes: 0 ok, 2 usage / connection errors.
 */
import { Command, InvalidArgumentError } from 'commander';
import type { SessionDescriptor } from '../../protocol/index.js';
import { EXIT, addConnectionOptions, connectClient, runCommand, type ConnectionFlags } from '../client/cli.js';
import { relativeTime } from '../tui/text.js';
import { packageVersion } from './main.js';

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
  cmd.action((flags: SessionsFlags) => runCommand('sessions', () => sessions(flags)));
  program.addCommand(cmd);
}

const STATUS_LABEL: Record<SessionDescriptor['status'], string> = {
  idle: 'idle',
  running: 'running',
  awaiting_approval: 'approval',
};

/** Plain-text table of sessions (no colours; stable for scripts that grep it). */
export function formatSessionsTable(sessions: readonly SessionDescriptor[], now = Date.now()): string {
  if (sessions.length === 0) return 'no sessions (start one with "agentd attach --new")\n';
  const rows = sessions.map((s) => [
    s.session_id,
    STATUS_LABEL[s.status],
    s.model.route,
    relativeTime(s.updated_at, now),
    String(s.head_sequence),
    s.title ?? '',
    s.cwd,
  ]);
  const head = ['SESSION', 'STATUS', 'MODEL', 'UPDATED', 'BATCHES', 'TITLE', 'CWD'];
  const widths = head.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i]!.length)));
  const fmt = (r: string[]) =>
    r
      .map((c, i) => (i === r.length - 1 ? c : c.padEnd(widths[i]!)))
      .join('  ')
      .trimEnd();
  return [fmt(head), ...rows.map(fmt)].join('\n') + '\n';
}

async function sessions(flags: SessionsFlags): Promise<number> {
  const { client } = await connectClient(flags, `agentd-cli/${packageVersion()}`, { maxReconnectAttempts: 0 });
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
