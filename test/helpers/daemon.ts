/**
 * Spawning the real daemon for tests: `node bin/agentd.js serve --port 0 --data-dir TMP`,
 * waiting for its `agentd listening on ws://HOST:PORT` line. Every test file starts its
 * own daemon(s) with their own temp data dir.
 *
 *   const d = await startDaemon({ config: { approval_policy: 'auto' } });
 *   const c = await connect(d);            // test/helpers/client.ts
 *   ...
 *   await d.stop();                        // SIGTERM, waits for exit, removes the data dir
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

export const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
export const BIN = join(ROOT, 'bin', 'agentd.js');

export interface DaemonOptions {
  /** Written to DATA_DIR/config.json (the daemon's default config file). */
  config?: unknown;
  /** Use this data dir (kept on stop) instead of a fresh temp dir (removed on stop). */
  dataDir?: string;
  /** --token; `null` starts with --no-auth; default: let the daemon generate one. */
  token?: string | null;
  /** Extra `serve` arguments. */
  args?: string[];
  /** Extra environment (AGENTD_TOKEN etc.). */
  env?: Record<string, string | undefined>;
  /** Daemon log level on stderr (default: $AGENTD_TEST_LOG_LEVEL or "warn"). */
  logLevel?: string;
  /** How long to wait for the listening line (default 20 s). */
  startTimeoutMs?: number;
}

export interface Health {
  ok: boolean;
  connections: number;
  buffered_bytes_max: number;
  rss_bytes: number;
  heap_used_bytes: number;
  sessions_resident?: number;
  pid: number;
  /** Cluster mode (docs/cluster.md): this node's id and the leases it holds now. */
  node_id?: string;
  sessions_owned?: number;
  [k: string]: unknown;
}

export interface Daemon {
  /** `ws://HOST:PORT` as printed. */
  readonly url: string;
  /** `ws://HOST:PORT/v1`. */
  readonly wsUrl: string;
  readonly httpUrl: string;
  readonly port: number;
  readonly dataDir: string;
  /** The token clients must present (null with --no-auth). */
  readonly token: string | null;
  readonly proc: ChildProcess;
  readonly pid: number;
  /** Everything the daemon wrote to stderr so far (logs). */
  stderr(): string;
  healthz(): Promise<Health>;
  /** Resolves with the exit code when the process exits. */
  readonly exited: Promise<number | null>;
  /** Send `signal` (default SIGTERM) and wait for exit; removes a temp data dir. */
  stop(signal?: NodeJS.Signals): Promise<number | null>;
}

const running = new Set<ChildProcess>();
process.once('exit', () => {
  for (const p of running) p.kill('SIGKILL');
});

/** Make a fresh temp data dir. */
export function tempDataDir(prefix = 'agentd-test-'): string {
  return mkdtempSync(join(tmpdir(), prefix));
}

export interface RunResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Run `node bin/agentd.js ...args` to completion (for start-up failure tests). */
export function runAgentd(args: string[], env: Record<string, string | undefined> = {}, timeoutMs = 20_000): Promise<RunResult> {
  return new Promise((resolve, reject) => {
    const proc = spawn(process.execPath, [BIN, ...args], {
      cwd: ROOT,
      env: { ...process.env, AGENTD_LOG_LEVEL: 'warn', ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    proc.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    proc.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    const timer = setTimeout(() => {
      proc.kill('SIGKILL');
      reject(new Error(`agentd ${args.join(' ')} did not exit within ${timeoutMs} ms\n${stdout}\n${stderr}`));
    }, timeoutMs);
    proc.on('exit', (code) => {
      clearTimeout(timer);
      // Let the pipes drain.
      setImmediate(() => resolve({ code, stdout, stderr }));
    });
  });
}

export async function startDaemon(options: DaemonOptions = {}): Promise<Daemon> {
  const ownDir = options.dataDir === undefined;
  const dataDir = options.dataDir ?? tempDataDir();
  if (options.config !== undefined) {
    writeFileSync(join(dataDir, 'config.json'), JSON.stringify(options.config));
  }
  const args = ['serve', '--host', '127.0.0.1', '--port', '0', '--data-dir', dataDir];
  if (options.token === null) args.push('--no-auth');
  else if (options.token !== undefined) args.push('--token', options.token);
  args.push(...(options.args ?? []));

  const proc = spawn(process.execPath, [BIN, ...args], {
    cwd: ROOT,
    env: {
      ...process.env,
      AGENTD_TOKEN: undefined,
      AGENTD_HOME: undefined,
      AGENTD_LOG_LEVEL: options.logLevel ?? process.env.AGENTD_TEST_LOG_LEVEL ?? 'warn',
      ...options.env,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  running.add(proc);
  let stderr = '';
  proc.stderr!.on('data', (d: Buffer) => {
    stderr += d.toString();
    if (stderr.length > 1_000_000) stderr = stderr.slice(-500_000);
  });
  const exited = new Promise<number | null>((resolve) =>
    proc.on('exit', (code) => {
      running.delete(proc);
      resolve(code);
    }),
  );

  const url = await new Promise<string>((resolve, reject) => {
    let stdout = '';
    const timer = setTimeout(
      () => reject(new Error(`daemon did not start within ${options.startTimeoutMs ?? 20_000} ms\n${stderr}`)),
      options.startTimeoutMs ?? 20_000,
    );
    proc.stdout!.on('data', (d: Buffer) => {
      stdout += d.toString();
      const m = /agentd listening on (ws:\/\/\S+)\n/.exec(stdout);
      if (m) {
        clearTimeout(timer);
        resolve(m[1]!);
      }
    });
    void exited.then((code) => {
      clearTimeout(timer);
      reject(new Error(`daemon exited with ${code} before listening\n${stdout}\n${stderr}`));
    });
  });

  const port = Number(new URL(url).port);
  const token =
    options.token === null ? null : (options.token ?? readFileSync(join(dataDir, 'token'), 'utf8').trim());
  const httpUrl = url.replace(/^ws:/, 'http:');

  return {
    url,
    wsUrl: `${url}/v1`,
    httpUrl,
    port,
    dataDir,
    token,
    proc,
    pid: proc.pid!,
    stderr: () => stderr,
    exited,
    async healthz() {
      const res = await fetch(`${httpUrl}/healthz`);
      return (await res.json()) as Health;
    },
    async stop(signal: NodeJS.Signals = 'SIGTERM') {
      if (proc.exitCode === null && proc.signalCode === null) proc.kill(signal);
      const timer = setTimeout(() => proc.kill('SIGKILL'), 15_000);
      const code = await exited;
      clearTimeout(timer);
      if (ownDir) rmSync(dataDir, { recursive: true, force: true });
      return code;
    },
  };
}
