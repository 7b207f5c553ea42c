/**
 * A per-test pool of real daemons, their clients, data dirs and fake provider servers,
 * all torn down after each test (SIGKILL: a test may have left a turn running).
 *
 *   const pool = daemonPool();                 // registers afterEach
 *   const { d, c, dir } = await pool.boot({ approval_policy: 'auto' });
 */
import { afterEach } from 'vitest';
import { connect, type TestClient } from './client.js';
import { startDaemon, tempDataDir, type Daemon } from './daemon.js';
import { startFakeOpenAI, type FakeOpenAI } from './fake-openai.js';
import { cleanup } from './session.js';

export interface DaemonPool {
  /** Start a daemon on `dataDir` (a fresh one by default) with `config`, and connect a client. */
  boot(config: object, dataDir?: string, env?: Record<string, string>): Promise<{ d: Daemon; c: TestClient; dir: string }>;
  /** A local OpenAI-compatible server, closed after the test. */
  fakeOpenAI(): Promise<FakeOpenAI>;
  /** Close `server` after the test. */
  track<T extends { close(): Promise<void> }>(server: T): T;
}

export function daemonPool(): DaemonPool {
  let daemons: Daemon[] = [];
  let clients: TestClient[] = [];
  let dirs: string[] = [];
  let servers: Array<{ close(): Promise<void> }> = [];
  afterEach(async () => {
    for (const c of clients) await c.close().catch(() => {});
    for (const d of daemons) await d.stop('SIGKILL').catch(() => {});
    for (const f of servers) await f.close();
    for (const dir of dirs) cleanup(dir);
    daemons = [];
    clients = [];
    dirs = [];
    servers = [];
  });
  const track = <T extends { close(): Promise<void> }>(server: T): T => {
    servers.push(server);
    return server;
  };
  return {
    async boot(config, dataDir = tempDataDir(), env = {}) {
      if (!dirs.includes(dataDir)) dirs.push(dataDir);
      const d = await startDaemon({ dataDir, config, env });
      daemons.push(d);
      const c = await connect(d);
      clients.push(c);
      return { d, c, dir: dataDir };
    },
    fakeOpenAI: async () => track(await startFakeOpenAI()),
    track,
  };
}
