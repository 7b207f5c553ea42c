/** The real daemon as a child process: `node bin/agentd.js serve --port 0 --no-auth`. */
import { spawn, type ChildProcess } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { ROOT, now } from './util.js';

export interface Daemon {
  url: string;
  proc: ChildProcess;
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
    '0',
    '--no-auth',
    '--data-dir',
    options.dataDir,
    '--log-level',
    'warn',
  ];
  const t0 = now();
  const proc = spawn(process.execPath, args, { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, AGENTD_TOKEN: undefined } });
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
    readyMs,
    async stop() {
      if (proc.exitCode === null && proc.signalCode === null) proc.kill('SIGTERM');
      const timer = setTimeout(() => proc.kill('SIGKILL'), 10_000);
      await exited;
      clearTimeout(timer);
    },
  };
}
