/** agentd in this process: a SessionHost (optionally with a bench model) and its WebSocket server. */
import { Journal } from '../../src/journal/journal.js';
import { pino } from 'pino';
import { encodeBatchFrame } from '../../protocol/index.js';
import { parseConfig } from '../../src/config/config.js';
import type { ModelClient, ModelRoute } from '../../src/model/types.js';
import { startServer, type AgentdServer } from '../../src/server/index.js';
import { SessionHost } from '../../src/session/host.js';
import { AgentdMetrics, TelemetryObserver } from '../../src/telemetry/index.js';

export interface InProcess {
  host: SessionHost;
  server: AgentdServer;
  /** ws://127.0.0.1:PORT/v1 */
  wsUrl: string;
  /** GET /healthz (server counters such as stream_fallbacks_total, when the server has them). */
  health(): Promise<Record<string, unknown>>;
  /** stream_fallbacks_total of /healthz (null when the server does not report it). */
  fallbacks(): Promise<number | null>;
  close(): Promise<void>;
}

/** A committed batch as stored in the journal, with its `batch` frame. */
export interface JournalRow {
  sequence: number;
  committed_at: number;
  /** The events as stored (JSON text). */
  events: string;
  frame: string;
}

/** The batches a session committed after its first (session_configured), in order. */
export function committedRows(host: SessionHost, sessionId: string): JournalRow[] {
  const rows = (host.journal as Journal)
    .withDatabase((db) => db.prepare('SELECT sequence, committed_at, events FROM batches WHERE session_id = ? AND sequence > 1 ORDER BY sequence')
    .all(sessionId)) as Omit<JournalRow, 'frame'>[];
  return rows.map((row) => ({ ...row, frame: encodeBatchFrame(sessionId, row.sequence, row.committed_at, row.events) }));
}

/**
 * The host as `agentd serve` opens it: with the telemetry observer (metrics on, traces off,
 * as by default). AGENTD_BENCH_NO_TELEMETRY=1 leaves it out (to measure what it costs).
 */
export function openHost(dataDir: string, config: unknown, modelClient?: (route: ModelRoute) => ModelClient): Promise<SessionHost> {
  const observer = process.env.AGENTD_BENCH_NO_TELEMETRY === '1' ? undefined : new TelemetryObserver(new AgentdMetrics(), null);
  return SessionHost.open({ dataDir, config: parseConfig(config), ...(modelClient && { modelClient }), ...(observer && { observer }) });
}

export async function startInProcess(
  dataDir: string,
  config: unknown,
  modelClient?: (route: ModelRoute) => ModelClient,
): Promise<InProcess> {
  const host = await openHost(dataDir, config, modelClient);
  const server = await startServer({
    sessions: host,
    host: '127.0.0.1',
    port: 0,
    token: null,
    serverName: 'agentd/bench',
    logger: pino({ level: 'silent' }),
  });
  const health = async (): Promise<Record<string, unknown>> => {
    const res = await fetch(`${server.url.replace(/^ws:/, 'http:')}/healthz`);
    return (await res.json()) as Record<string, unknown>;
  };
  return {
    host,
    server,
    wsUrl: `${server.url}/v1`,
    health,
    async fallbacks() {
      const n = (await health())['stream_fallbacks_total'];
      return typeof n === 'number' ? n : null;
    },
    async close() {
      server.stopAccepting();
      await host.close();
      await server.close(1000);
    },
  };
}
