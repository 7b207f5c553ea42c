/**
 * A real daemon with a connected test client and a working directory for its sessions:
 * started in beforeAll and stopped in afterAll, or — for restart tests — on a data dir that
 * is kept while the test restarts the daemon (kill -9 or SIGTERM) and reconnects.
 */
import { connect, type TestClient } from './client.js';
import { startDaemon, tempDataDir, type Daemon } from './daemon.js';
import { cleanup, tempDir } from './session.js';

export interface Live {
  daemon: Daemon;
  c: TestClient;
  /** A fresh directory for the sessions' cwd (removed on stop). */
  cwd: string;
}

/** Start a daemon and connect a client; `config(cwd)` may prepare the fresh cwd and builds the config. */
export async function startLive(cwdPrefix: string, config: (cwd: string) => unknown): Promise<Live> {
  const cwd = tempDir(cwdPrefix);
  const daemon = await startDaemon({ config: config(cwd) });
  return { daemon, c: await connect(daemon), cwd };
}

export async function stopLive(live: Live | undefined): Promise<void> {
  if (!live) return;
  await live.c.close();
  await live.daemon.stop();
  cleanup(live.cwd);
}

/** Create a session and attach to it; returns its id. */
export async function openSession(c: TestClient, config: Record<string, unknown>): Promise<string> {
  const s = await c.createSession(config);
  const sid = s.session_id as string;
  await c.attach(sid);
  return sid;
}

export interface Restartable extends Live {
  /** Stop the daemon with `signal`, start it again on the same data dir, reconnect `c`. */
  restart(signal: 'SIGKILL' | 'SIGTERM'): Promise<void>;
}

/** Run `fn` against a daemon whose data dir outlives restarts; everything is removed afterwards. */
export async function withRestarts(cwdPrefix: string, config: (cwd: string) => unknown, fn: (r: Restartable) => Promise<void>): Promise<void> {
  const dataDir = tempDataDir();
  const cwd = tempDir(cwdPrefix);
  const cfg = config(cwd);
  const daemon = await startDaemon({ dataDir, config: cfg });
  const r: Restartable = {
    daemon,
    c: await connect(daemon),
    cwd,
    async restart(signal) {
      await r.c.close();
      if (signal === 'SIGKILL') {
        r.daemon.proc.kill('SIGKILL');
        await r.daemon.exited;
      } else {
        await r.daemon.stop('SIGTERM');
      }
      r.daemon = await startDaemon({ dataDir, config: cfg });
      r.c = await connect(r.daemon);
    },
  };
  try {
    await fn(r);
  } finally {
    await r.c.close().catch(() => undefined);
    await r.daemon.stop();
    cleanup(dataDir);
    cleanup(cwd);
  }
}
