/**
 * `agentd serve`: run the daemon (docs/configuration.md).
 *
 * Exit codes: 0 clean shutdown, 1 start-up or shutdown failure, 2 bad usage or an
 * invalid configuration file (the message names the bad field).
 */
import { accessSync, constants as fsConstants } from 'node:fs';
import { hostname } from 'node:os';
import { InvalidArgumentError, type Command } from 'commander';
import { pino, type Logger } from 'pino';
import PinoPretty from 'pino-pretty';
import { loadConfig, resolveRoutes, type Config } from '../config/config.js';
import { ConfigError } from '../errors.js';
import { ModelFailureLogger } from '../model/failure_log.js';
import type { CommittedBatch } from '../journal/journal.js';
import { isLoopbackHost } from '../server/auth.js';
import type { AgentdServer } from '../server/index.js';
import type { SessionHost } from '../session/host.js';
import {
  ensureDataDir,
  isProcessAlive,
  readDaemonInfo,
  removeDaemonInfo,
  resolveDataDir,
  resolveServerToken,
  tightenDatabaseFiles,
  writeDaemonInfo,
} from '../data-dir/data-dir.js';

export interface ServeOptions {
  host: string;
  port: number;
  dataDir?: string;
  config?: string;
  token?: string;
  auth: boolean;
  logLevel: string;
  logFormat?: string;
  postgres?: string;
  nodeId?: string;
  advertiseUrl?: string;
}

/** Raised for problems the user must fix; `exitCode` 2 = usage/config. */
class StartupError extends Error {
  constructor(
    message: string,
    readonly exitCode: number,
  ) {
    super(message);
  }
}

/** Give up on a clean shutdown after this long. */
const SHUTDOWN_TIMEOUT_MS = 15_000;

function parsePort(value: string): number {
  const n = Number(value);
  if (!/^\d+$/.test(value) || !Number.isInteger(n) || n < 0 || n > 65535) {
    throw new InvalidArgumentError('must be an integer from 0 to 65535 (0 = any free port)');
  }
  return n;
}

export function registerServe(program: Command): void {
  program
    .command('serve')
    .description('run the daemon: serve protocol v1 at ws://HOST:PORT/v1 and /healthz')
    .option('--host <host>', 'interface to listen on', '127.0.0.1')
    .option('--port <port>', 'port to listen on (0 = any free port)', parsePort, 7777)
    .option('--data-dir <dir>', 'data directory (default: $AGENTD_HOME or ~/.local/share/agentd)')
    .option('--config <file>', 'configuration file (default: DATA_DIR/config.json if present)')
    .option('--token <token>', 'client token (default: $AGENTD_TOKEN, else DATA_DIR/token, generated on first start)')
    .option('--no-auth', 'accept clients without a token (loopback hosts only)')
    .option('--postgres <url>', 'cluster mode: the journal in this PostgreSQL database (default: $AGENTD_POSTGRES_URL, else config journal.url)')
    .option('--node-id <id>', 'cluster mode: this node\'s id (default: config cluster.node_id, else HOSTNAME-PORT)')
    .option('--advertise-url <url>', 'cluster mode: where other nodes reach this one (default: config cluster.advertise_url, else the listening URL)')
    .option('--log-level <level>', 'pino log level for stderr', process.env.AGENTD_LOG_LEVEL ?? 'info')
    .option('--log-format <format>', 'pretty (human-readable lines; the default on a terminal) or json (JSON lines; the default otherwise)')
    .action(async (opts: ServeOptions) => {
      const version = program.version() ?? '0.0.0';
      try {
        await serve(opts, version);
      } catch (err) {
        if (err instanceof ConfigError || err instanceof StartupError) {
          process.stderr.write(`agentd serve: ${err.message}\n`);
          process.exit(err instanceof StartupError ? err.exitCode : 2);
        }
        throw err;
      }
    });
}

/** Logs on stderr: human-readable lines on a terminal, JSON lines otherwise (docs/operations.md). */
function makeLogger(level: string, format: string | undefined): Logger {
  const levels = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'];
  if (!levels.includes(level)) throw new StartupError(`--log-level: must be one of ${levels.join(', ')}`, 2);
  if (format !== undefined && format !== 'pretty' && format !== 'json') throw new StartupError('--log-format: must be pretty or json', 2);
  const pretty = (format ?? (process.stderr.isTTY ? 'pretty' : 'json')) === 'pretty';
  if (!pretty) return pino({ name: 'agentd', level }, pino.destination({ dest: 2, sync: true }));
  // Synchronous, in this thread: no transport worker, nothing lost at exit.
  const stream = PinoPretty({ destination: 2, sync: true, colorize: process.stderr.isTTY === true, translateTime: 'SYS:HH:MM:ss.l', ignore: 'pid,hostname,name' });
  return pino({ name: 'agentd', level }, stream);
}

/** The data dir, created if missing; one that cannot hold a database is refused at once (exit 2). */
function usableDataDir(dir: string): string {
  if (/^\/(proc|sys|dev)(\/|$)/.test(dir)) throw new StartupError(`--data-dir: ${dir} is not a usable data dir (a kernel file system)`, 2);
  let abs: string;
  try {
    abs = ensureDataDir(dir);
    accessSync(abs, fsConstants.W_OK | fsConstants.X_OK);
  } catch (err) {
    throw new StartupError(`--data-dir: ${dir} is not a usable data dir: ${(err as Error).message}`, 2);
  }
  return abs;
}

/**
 * Take the data dir's exclusive lock for this process's life (docs/operations.md), or
 * refuse with exit 1 naming the holder. The holder writes its pid just after locking, so
 * a daemon started at the same instant waits briefly for it.
 */
async function holdDataDir(dataDir: string): Promise<void> {
  const { lockDataDir, readHolderPid } = await import('../journal/dir-lock.js');
  let result;
  try {
    result = lockDataDir(dataDir);
  } catch (err) {
    throw new StartupError(`--data-dir: cannot lock ${dataDir}: ${(err as Error).message}`, 2);
  }
  if (result.ok) return;
  let pid = result.holderPid;
  for (let i = 0; i < 40 && (pid === null || pid === process.pid || !isProcessAlive(pid)); i++) {
    await new Promise((r) => setTimeout(r, 50));
    pid = readHolderPid(dataDir);
  }
  const who = pid !== null && pid !== process.pid ? `pid ${pid}` : 'another process';
  throw new StartupError(`another agentd (${who}) is serving ${dataDir}: one daemon per data dir`, 1);
}

/** Refuse to share a data dir with a daemon that is still serving it. */
async function checkNotRunning(dataDir: string): Promise<void> {
  const info = readDaemonInfo(dataDir);
  if (!info || info.pid === process.pid || !isProcessAlive(info.pid)) return;
  try {
    const health = new URL(info.url.replace(/^ws/, 'http') + '/healthz');
    const res = await fetch(health, { signal: AbortSignal.timeout(1000) });
    const body = (await res.json()) as { pid?: unknown };
    if (body.pid === info.pid) {
      throw new StartupError(`another agentd (pid ${info.pid}) is serving ${dataDir} at ${info.url}`, 1);
    }
  } catch (err) {
    if (err instanceof StartupError) throw err;
    // Not answering: a stale daemon.json whose pid was reused.
  }
}

export async function serve(opts: ServeOptions, version: string): Promise<void> {
  const token = opts.auth ? (opts.token ?? process.env.AGENTD_TOKEN) : undefined;
  if (!opts.auth && !isLoopbackHost(opts.host)) {
    throw new StartupError(`--no-auth is only allowed on a loopback host (127.0.0.1, ::1, localhost), not ${opts.host}`, 2);
  }
  const logger = makeLogger(opts.logLevel, opts.logFormat);
  const dataDir = usableDataDir(resolveDataDir(opts.dataDir));
  const config: Config = loadConfig(dataDir, opts.config); // throws ConfigError
  const tune = tuning();
  await holdDataDir(dataDir);
  await checkNotRunning(dataDir);
  const cluster = clusterMode(opts, config);
  const pgJournal = cluster ? await openClusterJournal(cluster) : null;
  if (cluster && pgJournal) await checkNodeId(pgJournal, cluster, logger);
  // Cluster mode: one token for the whole cluster, kept in the database (generated once).
  const clusterToken = pgJournal && opts.auth && !token ? await clusterTokenOf(pgJournal) : undefined;
  const auth = opts.auth ? resolveServerToken(dataDir, token ?? clusterToken) : null;
  if (auth?.source === 'generated') logger.info({ file: `${dataDir}/token` }, 'generated a new client token');

  // Loaded here, not at the top: other `agentd` commands should not pay for the daemon.
  const [{ SessionHost }, { startServer }, { modelCatalog }, { startTelemetry }, { combineObservers }, notifyModule, clusterModules] = await Promise.all([
    import('../session/host.js'),
    import('../server/index.js'),
    import('../server/models.js'),
    import('../telemetry/index.js'),
    import('../session/observer.js'),
    config.notify ? import('../notify/notifier.js') : null,
    cluster ? Promise.all([import('../cluster/node.js'), import('../cluster/host.js')]) : null,
  ]);
  const telemetry = await startTelemetry({ config, version, ...(cluster && { nodeId: cluster.nodeId }) });
  if (telemetry.tracing) logger.info({ otlp_endpoint: process.env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT || process.env.OTEL_EXPORTER_OTLP_ENDPOINT || config.telemetry.otlp_endpoint }, 'exporting traces');
  const node =
    cluster && pgJournal && clusterModules
      ? new clusterModules[0].ClusterNode(pgJournal, { ...cluster, url: cluster.url }, logger)
      : null;
  // The notification webhook (docs/sessions.md#notifications) and the model-failure log (docs/operations.md#logs).
  const notifier = config.notify && notifyModule ? new notifyModule.Notifier({ config: config.notify, log: logger.child({ component: 'notify' }) }) : null;
  const modelLog = new ModelFailureLogger(logger.child({ component: 'model' }));
  const observer = combineObservers(telemetry.observer, notifier, { committed: (batch) => logIdleTimeouts(batch, modelLog), modelClient: (client) => modelLog.wrap(client) });
  let host: SessionHost;
  try {
    host = await SessionHost.open({ dataDir, config, logger, observer, ...(pgJournal && node && { journal: pgJournal, ownership: node }) });
  } catch (err) {
    if (err instanceof ConfigError) throw err;
    throw new StartupError(`cannot open the session host in ${dataDir}: ${(err as Error).message}`, 1);
  }
  tightenDatabaseFiles(dataDir); // after opening: a new database exists now too

  const sessions = node && clusterModules ? new clusterModules[1].ClusterHost(host, node) : host;
  let server: AgentdServer;
  try {
    server = await startServer({
      sessions,
      ...(cluster && { peerToken: cluster.secret }),
      host: opts.host,
      port: opts.port,
      token: auth?.token ?? null,
      serverName: `agentd/${version}`,
      logger,
      health: () => ({ ...hostHealth(host), ...(node && { node_id: node.nodeId, sessions_owned: node.sessionsOwned }) }),
      models: modelCatalog(config.models.default, resolveRoutes(config).values()),
      ...(node && { nodes: () => node.liveNodes() }),
      metrics: { scrape: () => telemetry.scrape(), public: config.server.metrics_public },
      maxConnections: config.server.max_connections,
      maxUnauthenticated: config.server.max_unauthenticated,
      helloTimeoutMs: config.server.auth_deadline_ms,
      helloMaxBytes: config.server.hello_max_bytes,
      allowedHosts: config.server.allowed_hosts,
      allowedOrigins: config.server.allowed_origins,
      ...tune,
    });
  } catch (err) {
    await sessions.close().catch(() => undefined);
    throw new StartupError(`cannot listen on ${opts.host}:${opts.port}: ${(err as Error).message}`, 1);
  }
  if (node && cluster) {
    const advertise = cluster.advertiseUrl ?? server.url;
    try {
      await node.start(host, advertise);
    } catch (err) {
      await sessions.close().catch(() => undefined);
      await server.close(0);
      throw new StartupError(`cannot join the cluster: ${(err as Error).message}`, 1);
    }
    logger.info({ node_id: cluster.nodeId, advertise_url: advertise }, 'joined the cluster');
  }

  const listening = server;
  if (notifier) {
    const opened = host;
    notifier.describe = (id) => {
      const d = opened.resident(id)?.descriptor();
      return d && { title: d.title, parent_session_id: d.parent_session_id };
    };
    notifier.webUrl = (cluster?.advertiseUrl ?? server.url).replace(/^ws/, 'http');
  }
  telemetry.wire({
    sessions: () => host.residentStats(),
    connections: () => listening.connections().length,
    mcpServers: () => host.mcpStates(),
    ...(node && { cluster: () => ({ leasesOwned: node.sessionsOwned, takeovers: node.takeovers }) }),
  });

  writeDaemonInfo(dataDir, { url: server.url, pid: process.pid, auth: opts.auth, started_at: Date.now(), version });
  logger.info({ url: `${server.url}/v1`, data_dir: dataDir, auth: opts.auth }, 'listening');
  process.stdout.write(`agentd listening on ${server.url}\n`);

  let stopping = false;
  const shutdown = async (signal: string): Promise<void> => {
    if (stopping) {
      logger.warn({ signal }, 'second signal: exiting without a clean shutdown');
      process.exit(1);
    }
    stopping = true;
    logger.info({ signal }, 'shutting down');
    const timer = setTimeout(() => {
      logger.error('clean shutdown timed out');
      process.exit(1);
    }, SHUTDOWN_TIMEOUT_MS);
    let code = 0;
    server.stopAccepting();
    try {
      await sessions.close(); // finishes the last commit; attached clients still get it (cluster: hands the leases back)
    } catch (err) {
      logger.error({ err }, 'closing the session host failed');
      code = 1;
    }
    await server.close(2000);
    notifier?.close();
    await flushTraces(telemetry.shutdown(), logger);
    removeDaemonInfo(dataDir);
    clearTimeout(timer);
    logger.info('stopped');
    process.exit(code);
  };
  process.on('SIGINT', () => void shutdown('SIGINT'));
  process.on('SIGTERM', () => void shutdown('SIGTERM'));
}

/**
 * Connection tuning from the environment (for tests and experiments; the defaults suit
 * normal use): AGENTD_WS_HIGH_WATER_MARK (bytes), AGENTD_WS_PAGE_SIZE (batches),
 * AGENTD_HELLO_TIMEOUT_MS (overrides server.auth_deadline_ms).
 */
function tuning(): { highWaterMark?: number; pageSize?: number; helloTimeoutMs?: number } {
  const read = (name: string, min: number): number | undefined => {
    const raw = process.env[name];
    if (raw === undefined || raw === '') return undefined;
    const n = Number(raw);
    if (!Number.isInteger(n) || n < min) throw new StartupError(`${name}: must be an integer >= ${min}`, 2);
    return n;
  };
  const highWaterMark = read('AGENTD_WS_HIGH_WATER_MARK', 1024);
  const pageSize = read('AGENTD_WS_PAGE_SIZE', 1);
  const helloTimeoutMs = read('AGENTD_HELLO_TIMEOUT_MS', 1);
  return {
    ...(highWaterMark !== undefined && { highWaterMark }),
    ...(pageSize !== undefined && { pageSize }),
    ...(helloTimeoutMs !== undefined && { helloTimeoutMs }),
  };
}

/** The shortest cluster secret accepted (docs/cluster.md). */
const MIN_SECRET_BYTES = 32;

interface ClusterMode {
  url: string;
  nodeId: string;
  advertiseUrl: string | undefined;
  secret: string;
  leaseMs: number;
  heartbeatMs: number;
}

/** Cluster mode (docs/cluster.md) when a PostgreSQL journal is configured: its settings, checked. */
function clusterMode(opts: ServeOptions, config: Config): ClusterMode | null {
  const url = opts.postgres ?? (process.env.AGENTD_POSTGRES_URL || undefined) ?? (config.journal.backend === 'postgres' ? config.journal.url : undefined);
  if (url === undefined) return null;
  const secretEnv = config.cluster.secret_env;
  const secret = process.env[secretEnv];
  if (!secret) throw new StartupError(`cluster mode needs the shared node-to-node secret in $${secretEnv} (the same on every node)`, 2);
  if (Buffer.byteLength(secret) < MIN_SECRET_BYTES) throw new StartupError(`$${secretEnv}: the cluster secret must have at least ${MIN_SECRET_BYTES} bytes (e.g. openssl rand -hex 32)`, 2);
  const nodeId = opts.nodeId ?? config.cluster.node_id ?? (opts.port === 0 ? undefined : `${hostname()}-${opts.port}`);
  if (nodeId === undefined) throw new StartupError('cluster mode on --port 0 needs --node-id (a node id must stay the same across restarts)', 2);
  if (!/^[A-Za-z0-9][A-Za-z0-9._-]{0,62}$/.test(nodeId)) throw new StartupError(`--node-id: letters, digits, . _ - (at most 63), not "${nodeId}"`, 2);
  const advertiseUrl = opts.advertiseUrl ?? config.cluster.advertise_url;
  if (advertiseUrl !== undefined && !/^wss?:\/\/[^\s/]+$/.test(advertiseUrl)) throw new StartupError(`--advertise-url: must be ws://HOST:PORT, not "${advertiseUrl}"`, 2);
  return { url, nodeId, advertiseUrl, secret, leaseMs: config.cluster.lease_ms, heartbeatMs: config.cluster.heartbeat_ms };
}

/** Refuse a node id a live process is using; wait out a dead holder's heartbeat (docs/cluster.md). */
async function checkNodeId(journal: import('../journal/pg/journal.js').PgSessionJournal, cluster: ClusterMode, logger: Logger): Promise<void> {
  const { claimNodeId } = await import('../cluster/node-id.js');
  const verdict = await claimNodeId(journal, cluster.nodeId, cluster.leaseMs, cluster.heartbeatMs);
  if (!verdict.free) {
    await journal.close();
    throw new StartupError(`node ${cluster.nodeId} is already running at ${verdict.url}: one process per node id`, 1);
  }
  if (verdict.waitedMs > 100) logger.info({ node_id: cluster.nodeId, waited_ms: verdict.waitedMs }, 'the previous process of this node id stopped heartbeating: starting in its place');
}

async function openClusterJournal(cluster: ClusterMode): Promise<import('../journal/pg/journal.js').PgSessionJournal> {
  const { PgSessionJournal } = await import('../journal/pg/journal.js');
  try {
    return await PgSessionJournal.open({ url: cluster.url, nodeId: cluster.nodeId, applicationName: `agentd:${cluster.nodeId}` });
  } catch (err) {
    throw new StartupError(`cannot open the PostgreSQL journal: ${(err as Error).message}`, 1);
  }
}

async function clusterTokenOf(journal: import('../journal/pg/journal.js').PgSessionJournal): Promise<string> {
  try {
    return await journal.token();
  } catch (err) {
    await journal.close().catch(() => undefined);
    throw new StartupError(`cannot read the cluster's client token: ${(err as Error).message}`, 1);
  }
}

/** Export the spans still buffered, giving up after a few seconds (an unreachable collector). */
async function flushTraces(flushing: Promise<void>, logger: Logger): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<'late'>((resolve) => (timer = setTimeout(() => resolve('late'), 3000)));
  try {
    if ((await Promise.race([flushing, late])) === 'late') logger.warn('the trace exporter did not finish in 3 s: spans may be lost');
  } catch (err) {
    logger.warn({ err }, 'exporting the last spans failed');
  } finally {
    clearTimeout(timer);
  }
}

/** A turn that failed because its model stream went quiet is logged as a failed model call (docs/operations.md#logs). */
function logIdleTimeouts(batch: CommittedBatch, log: ModelFailureLogger): void {
  if (!batch.frame.includes('"type":"turn_')) return;
  for (const { msg } of batch.events) {
    if (msg.type === 'turn_failed' && msg.error.code === 'model_idle_timeout') log.idleTimeout(batch.session_id, msg.error.message);
    if (msg.type === 'turn_complete' || msg.type === 'turn_failed' || msg.type === 'turn_interrupted') log.forget(batch.session_id);
  }
}

/** Statistics of the session host for /healthz. */
function hostHealth(host: SessionHost): Record<string, unknown> {
  return { sessions_resident: host.residentCount, journal: host.journalHealth() };
}
