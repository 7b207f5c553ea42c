/**
 * The real daemon as a child process: `node bin/agentd.js serve --port 0 --no-auth` (or
 * `--token T`, a fixed port, extra serve flags and environment: the cluster nodes).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { ROOT, now } from './util.js';

export interface Daemon {
  url: string;
  proc: ChildProcess;
  pid: number;
  /** Resolves when the process has exited. */
  exited: Promise<void>;
  /** Everything the daemon wrote to stderr lately (the last 20 kB). */
  stderr(): string;
  /** ms from spawn to the `agentd listening on` line. */
  readyMs: number;
  stop(): Promise<void>;
}

export interface DaemonOptions {
  dataDir: string;
  /** Written to DATA_DIR/config.json. */
  config?: unknown;
  /** Extra node flags for the daemon process (e.g. --cpu-prof). */
  nodeArgs?: string[];
  timeoutMs?: number;
  /** `--token T` instead of `--no-auth`. */
  token?: string;
  /** Port to listen on (default 0: any free port). */
  port?: number;
  /** Extra `serve` flags. */
  args?: string[];
  /** Extra environment. */
  env?: Record<string, string | undefined>;
  /** Daemon log level (default warn). */
  logLevel?: string;
}

export async function startDaemon(options: DaemonOptions): Promise<Daemon> {
  if (options.config !== undefined) writeFileSync(join(options.dataDir, 'config.json'), JSON.stringify(options.config));
  const args = [
    ...(options.nodeArgs ?? []),
    join(ROOT, 'bin', 'agentd.js'),
    'serve',
    '--host',
    '127.0.0.1',
    '--port',
    String(options.port ?? 0),
    ...(options.token === undefined ? ['--no-auth'] : ['--token', options.token]),
    '--data-dir',
    options.dataDir,
    '--log-level',
    options.logLevel ?? 'warn',
    ...(options.args ?? []),
  ];
  const t0 = now();
  const proc = spawn(process.execPath, args, { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, AGENTD_TOKEN: undefined, ...options.env } });
  let stderr = '';
  proc.stderr!.on('data', (d: Buffer) => {
    stderr = (stderr + d.toString()).slice(-20_000);
  });
  const exited = new Promise<void>((resolve) => proc.once('exit', () => resolve()));
  const url = await new Promise<string>((resolve, reject) => {
    let out = '';
    const timer = setTimeout(() => {
      proc.kill('SIGKILL');
      reject(new Error(`daemon not ready within ${options.timeoutMs ?? 60_000} ms\n${stderr}`));
    }, options.timeoutMs ?? 60_000);
    proc.stdout!.on('data', (d: Buffer) => {
      out += d.toString();
      const m = /agentd listening on (ws:\/\/\S+)\n/.exec(out);
      if (m) {
        clearTimeout(timer);
        resolve(m[1]!);
      }
    });
    void exited.then(() => {
      clearTimeout(timer);
      reject(new Error(`daemon exited before listening (code ${proc.exitCode})\n${out}\n${stderr}`));
    });
  });
  const readyMs = now() - t0;
  return {
    url,
    proc,
    pid: proc.pid!,
    exited,
    stderr: () => stderr,
    readyMs,
    async stop() {
      if (proc.exitCode === null && proc.signalCode === null) proc.kill('SIGTERM');
      const timer = setTimeout(() => proc.kill('SIGKILL'), 10_000);
      await exited;
      clearTimeout(timer);
    },
  };
}
