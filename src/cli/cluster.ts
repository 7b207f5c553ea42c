/**
 * `agentd cluster status`: the nodes of a cluster (docs/cluster.md) as the shared
 * PostgreSQL database records them — id, advertised URL, last heartbeat, sessions owned.
 *
 * Exit codes: 0 ok, 1 the database cannot be read, 2 usage.
 */
import { Command, InvalidArgumentError } from 'commander';
import type { NodeStatus } from '../journal/pg/leases.js';
import { EXIT, runCliCommand } from './exit.js';
import { packageVersion } from './version.js';

interface StatusFlags {
  postgres?: string;
  json?: boolean;
  leaseMs: number;
}

function parseMs(value: string): number {
  const n = Number(value);
  if (!/^\d+$/.test(value) || n < 1) throw new InvalidArgumentError('must be a positive integer (milliseconds)');
  return n;
}

export function registerCluster(program: Command): void {
  const cluster = new Command('cluster').description('cluster mode: many daemons on one PostgreSQL');
  cluster
    .command('status')
    .description('list the nodes: id, URL, last heartbeat, sessions owned')
    .option('--postgres <url>', 'the cluster database (default: $AGENTD_POSTGRES_URL)')
    .option('--lease-ms <ms>', 'a node silent this long is dead (cluster.lease_ms)', parseMs, 3000)
    .option('--json', 'print {"nodes": [...]} as JSON')
    .version(packageVersion(), '-V, --version', 'print the version')
    .action((flags: StatusFlags) => runCliCommand('cluster status', () => status(flags)));
  program.addCommand(cluster);
}

async function status(flags: StatusFlags): Promise<number> {
  const url = flags.postgres ?? process.env.AGENTD_POSTGRES_URL;
  if (!url) {
    process.stderr.write('agentd cluster status: give --postgres URL (or set AGENTD_POSTGRES_URL)\n');
    return EXIT.usage;
  }
  const { readClusterStatus } = await import('../journal/pg/leases.js');
  let nodes: NodeStatus[];
  try {
    nodes = await readClusterStatus(url, flags.leaseMs);
  } catch (err) {
    process.stderr.write(`agentd cluster status: ${(err as Error).message}\n`);
    return EXIT.turnFailed; // 1: the database could not be read
  }
  process.stdout.write(flags.json ? `${JSON.stringify({ nodes }, null, 2)}\n` : formatNodes(nodes));
  return EXIT.ok;
}

export function formatNodes(nodes: readonly NodeStatus[]): string {
  if (nodes.length === 0) return 'no nodes have joined this cluster\n';
  const rows = nodes.map((n) => [
    n.node_id,
    n.advertise_url,
    n.stopped ? 'stopped' : n.alive ? 'alive' : 'dead',
    `${(n.heartbeat_age_ms / 1000).toFixed(1)}s ago`,
    String(n.sessions_owned),
  ]);
  const head = ['NODE', 'URL', 'STATE', 'HEARTBEAT', 'SESSIONS'];
  const widths = head.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i]!.length)));
  const line = (cells: string[]) => cells.map((c, i) => c.padEnd(widths[i]!)).join('  ').trimEnd();
  return [line(head), ...rows.map(line)].join('\n') + '\n';
}
