/**
 * `agentd acp [--data-dir D] [--url U] [--token T]`: the Agent Client Protocol on
 * stdin/stdout for editors (docs/editors.md). Nothing but protocol frames goes to stdout;
 * diagnostics go to stderr. Without --url (or $AGENTD_URL), when no daemon serves the
 * data dir, it starts `agentd serve` detached — on port 7777, or any free port when that
 * is taken — so sessions outlive the editor; the same happens if that daemon dies later.
 */
import { spawn } from 'node:child_process';
import { openSync } from 'node:fs';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { Readable, Writable } from 'node:stream';
import { ndJsonStream } from '@agentclientprotocol/sdk';
import type { Command } from 'commander';
import { AcpBridge } from '../acp/bridge.js';
import { resolveEndpoint } from '../client/endpoint.js';
import { ensureDataDir, isProcessAlive, readDaemonInfo, resolveDataDir } from '../data-dir/data-dir.js';
import { addConnectionOptions, connectClient, type ConnectionFlags } from './connect.js';
import { packageVersion } from './version.js';

const DEFAULT_PORT = 7777;
const START_WAIT_MS = 20_000;

export function registerAcp(program: Command): void {
  const cmd = program
    .command('acp')
    .description('speak the Agent Client Protocol on stdin/stdout (for editors: docs/editors.md), as a client of the daemon');
  addConnectionOptions(cmd);
  cmd.action(async (flags: ConnectionFlags) => {
    await runAcp(flags);
  });
}

function portFree(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const srv = createServer();
    srv.once('error', () => resolve(false));
    srv.listen(port, '127.0.0.1', () => srv.close(() => resolve(true)));
  });
}

function serving(dataDir: string): boolean {
  const info = readDaemonInfo(dataDir);
  return info !== null && isProcessAlive(info.pid);
}

/** Start `agentd serve` for the data dir, detached (its log: DATA_DIR/daemon.log). */
async function startDaemon(dataDir: string): Promise<void> {
  ensureDataDir(dataDir);
  const port = (await portFree(DEFAULT_PORT)) ? DEFAULT_PORT : 0;
  const log = openSync(join(dataDir, 'daemon.log'), 'a', 0o600);
  const child = spawn(process.execPath, [process.argv[1]!, 'serve', '--data-dir', dataDir, '--port', String(port)], {
    detached: true,
    stdio: ['ignore', log, log],
    env: process.env,
  });
  child.unref();
  process.stderr.write(`agentd acp: started the daemon (pid ${child.pid}) for ${dataDir}; its log: ${join(dataDir, 'daemon.log')}\n`);
  const until = Date.now() + START_WAIT_MS;
  while (!serving(dataDir) || readDaemonInfo(dataDir)?.pid !== child.pid) {
    if (Date.now() > until) throw new Error(`the daemon did not start within ${START_WAIT_MS} ms; see ${join(dataDir, 'daemon.log')}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

export async function runAcp(flags: ConnectionFlags): Promise<void> {
  const dataDir = resolveDataDir(flags.dataDir);
  const own = !flags.url?.length && !process.env.AGENTD_URL;
  if (own && !serving(dataDir)) await startDaemon(dataDir);
  let restarting: Promise<void> | null = null;
  const client = await connectClient(flags, `agentd-acp/${packageVersion()}`, {
    backoff: { initialMs: 100, maxMs: 2000 },
  });
  // A daemon that died while we were attached (and that nobody restarted) is started again.
  client.events.on('state', (s) => {
    if (!own || s.kind !== 'reconnecting' || restarting || serving(dataDir) || resolveEndpoint({ ...(flags.dataDir && { dataDir: flags.dataDir }) }).urlSource !== 'daemon.json') return;
    restarting = startDaemon(dataDir)
      .then(() => {
        client.reconnectNow();
      })
      .catch((err: unknown) => {
        process.stderr.write(`agentd acp: ${(err as Error).message}\n`);
      })
      .finally(() => {
        restarting = null;
      });
  });
  const bridge = new AcpBridge({ client, version: packageVersion(), log: (line) => process.stderr.write(`${line}\n`) });
  const stream = ndJsonStream(Writable.toWeb(process.stdout) as WritableStream<Uint8Array>, Readable.toWeb(process.stdin) as ReadableStream<Uint8Array>);
  const conn = bridge.connect(stream);
  await conn.closed;
  client.close();
  process.exit(0);
}
