/**
 * `npm run cluster` — a three-node agentd cluster on one machine, for trying cluster mode
 * (docs/cluster.md, docs/cluster.md): a throwaway PostgreSQL in a temp dir (run as `nobody`
 * when started as root), three nodes on ports 7801–7803 with a generated secret and token,
 * the scripted model. Prints how to attach, then `agentd cluster status` every few seconds.
 * Ctrl-C stops the nodes and PostgreSQL and removes the temp dir.
 *
 *   node dist/bench/cluster_demo.js [--nodes N] [--base-port P] [--every SECONDS]
 */
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { clusterStatus, createLocalCluster, type LocalCluster } from './lib/cluster.js';
import { findPostgres, POSTGRES_MISSING, startPostgres, type PostgresServer } from './lib/postgres.js';

interface Args {
  nodes: number;
  basePort: number;
  everyMs: number;
}

function parseArgs(argv: string[]): Args {
  const args: Args = { nodes: 3, basePort: 7801, everyMs: 5000 };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i]!;
    const value = () => {
      const v = argv[++i];
      if (v === undefined || !/^\d+$/.test(v)) throw new Error(`${a} needs a number`);
      return Number(v);
    };
    if (a === '--nodes') args.nodes = value();
    else if (a === '--base-port') args.basePort = value();
    else if (a === '--every') args.everyMs = value() * 1000;
    else if (a === '-h' || a === '--help') {
      console.log('usage: npm run cluster -- [--nodes N (3)] [--base-port P (7801)] [--every SECONDS (5)]');
      process.exit(0);
    } else throw new Error(`unknown argument ${a} (usage: --nodes N --base-port P --every SECONDS)`);
  }
  if (args.nodes < 1 || args.nodes > 26) throw new Error('--nodes: 1 to 26');
  return args;
}

const bold = (s: string) => (process.stdout.isTTY ? `\x1b[1m${s}\x1b[0m` : s);
const dim = (s: string) => (process.stdout.isTTY ? `\x1b[2m${s}\x1b[0m` : s);

async function main(): Promise<void> {
  const args = parseArgs(process.argv.slice(2));
  if (!findPostgres()) {
    console.error(`npm run cluster: ${POSTGRES_MISSING}`);
    process.exit(2);
  }
  const dir = mkdtempSync(join(tmpdir(), 'agentd-cluster-demo-'));
  const workspace = join(dir, 'workspace');
  mkdirSync(workspace);
  let server: PostgresServer | null = null;
  let cluster: LocalCluster | null = null;
  let stopping = false;

  const shutdown = async (code: number) => {
    if (stopping) return;
    stopping = true;
    console.log(dim('\nstopping the nodes and PostgreSQL …'));
    await cluster?.stop();
    await server?.stop();
    rmSync(dir, { recursive: true, force: true });
    console.log(dim(`removed ${dir}`));
    process.exit(code);
  };
  process.on('SIGINT', () => void shutdown(0));
  process.on('SIGTERM', () => void shutdown(0));

  try {
    console.log(dim('starting PostgreSQL …'));
    server = await startPostgres({ maxConnections: 100 });
    const postgresUrl = await server.createDatabase();
    const ids = Array.from({ length: args.nodes }, (_, i) => String.fromCharCode(97 + i));
    const ports = ids.map((_, i) => args.basePort + i);
    cluster = createLocalCluster({
      postgresUrl,
      dir,
      ids,
      ports,
      // Every node gives new sessions the same working directory (one machine: shared storage).
      config: { workspace },
      logLevel: 'warn',
    });
    console.log(dim(`starting ${ids.length} nodes on ports ${ports.join(', ')} …`));
    for (const n of cluster.nodes) {
      try {
        await n.start();
      } catch (err) {
        throw new Error(`node ${n.id} (port ${ports[cluster.nodes.indexOf(n)]}) did not start: ${(err as Error).message}`);
      }
    }

    const bin = 'node bin/agentd.js';
    console.log('');
    console.log(bold('agentd cluster demo'));
    console.log(`  PostgreSQL   ${postgresUrl}`);
    for (const n of cluster.nodes) console.log(`  node ${n.id}       ${n.url}  (pid ${n.daemon!.pid}, data dir ${n.dataDir})`);
    console.log(`  token        ${cluster.token}`);
    console.log(`  secret       AGENTD_CLUSTER_SECRET=${cluster.secret}`);
    console.log(`  workspace    ${workspace}`);
    console.log('');
    console.log(bold('try it'));
    const [first, second] = [cluster.nodes[0]!, cluster.nodes[1] ?? cluster.nodes[0]!];
    console.log(`  ${bin} attach --new --url ${first.url} --token ${cluster.token}`);
    console.log(`  ${bin} sessions --url ${second.url} --token ${cluster.token}        # any node lists every session`);
    console.log(`  ${bin} attach SESSION_ID --url ${second.url} --token ${cluster.token}   # watch it live from another node`);
    console.log(`  kill -9 ${first.daemon!.pid}   # node ${first.id}: its running turns continue on a live node within seconds`);
    console.log(`  ${bin} cluster status --postgres ${postgresUrl}`);
    console.log(dim('  (scripted model: "!sleep 5000" streams slowly, "!sh CMD" asks for approval)'));
    console.log(dim('  Ctrl-C stops everything and removes the temp dir.'));
    console.log('');

    for (const n of cluster.nodes) {
      const d = n.daemon!;
      void d.exited.then(() => {
        if (!stopping) console.log(bold(`node ${n.id} (pid ${d.pid}) exited`) + dim(' — the others take over its sessions'));
      });
    }
    for (;;) {
      if (stopping) return;
      try {
        const out = await clusterStatus(postgresUrl);
        console.log(dim(`── cluster status ${new Date().toISOString().slice(11, 19)} ──`));
        process.stdout.write(out.endsWith('\n') ? out : `${out}\n`);
      } catch (err) {
        console.log(dim(`cluster status: ${(err as Error).message}`));
      }
      await new Promise((r) => setTimeout(r, args.everyMs));
    }
  } catch (err) {
    console.error(`npm run cluster: ${(err as Error).message}`);
    await shutdown(1);
  }
}

void main();
