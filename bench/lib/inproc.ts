/** agentd in this process: a SessionHost (optionally with a bench model) and its WebSocket server. */
import { pino } from 'pino';
import { parseConfig } from '../../src/config/config.js';
import type { ModelClient, ModelRoute } from '../../src/model/types.js';
import { startServer, type AgentdServer } from '../../src/server/index.js';
import { SessionHost } from '../../src/session/host.js';

export interface InProcess {
  host: SessionHost;
  server: AgentdServer;
  /** ws://127.0.0.1:PORT/v1 */
  wsUrl: string;
  /** GET /healthz (server counters such as stream_fallbacks_total, when the server has them). */
  health(): Promise<Record<string, unknown>>;
  close(): Promise<void>;
}

export function openHost(dataDir: string, config: unknown, modelClient?: (route: ModelRoute) => ModelClient): SessionHost {
  return SessionHost.open({ dataDir, config: parseConfig(config), ...(modelClient && { modelClient }) });
}

export async function startInProcess(
  dataDir: string,
  config: unknown,
  modelClient?: (route: ModelRoute) => ModelClient,
): Promise<InProcess> {
  const host = openHost(dataDir, config, modelClient);
  const server = await startServer({
    sessions: host,
    host: '127.0.0.1',
    port: 0,
    token: null,
    serverName: 'agentd/bench',
    logger: pino({ level: 'silent' }),
  });
  return {
    host,
    server,
    wsUrl: `${server.url}/v1`,
    async health() {
      const res = await fetch(`${server.url.replace(/^ws:/, 'http:')}/healthz`);
      return (await res.json()) as Record<string, unknown>;
    },
    async close() {
      server.stopAccepting();
      await host.close();
      await server.close(1000);
    },
  };
}
