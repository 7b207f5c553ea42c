/**
 * A throwaway PostgreSQL server (tests, `npm run cluster`, the cluster bench): `initdb` +
 * `pg_ctl` in a temp dir, on a free
 * loopback port (its unix socket in the same temp dir), as the unprivileged `nobody` when
 * the tests run as root (PostgreSQL refuses to run as root). One server per test file
 * (`startPostgres()` in `beforeAll`, `stop()` in `afterAll`), a fresh database per test
 * (`createDatabase()`). `findPostgres()` is null when the binaries are absent: tests skip
 * then, naming what to install. It lives in bench/lib so that tsc compiles it for the demo
 * and the bench; test/helpers/postgres.ts re-exports it.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { chmodSync, chownSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';

/** Why PostgreSQL tests are skipped when `findPostgres()` is null. */
export const POSTGRES_MISSING =
  'PostgreSQL binaries not found (no initdb/pg_ctl via pg_config --bindir or /usr/lib/postgresql/*/bin): apt-get install postgresql';

/** The directory holding initdb, pg_ctl and postgres, or null when PostgreSQL is not installed. */
export function findPostgres(): string | null {
  const candidates: string[] = [];
  const fromConfig = spawnSync('pg_config', ['--bindir'], { encoding: 'utf8' });
  if (fromConfig.status === 0) candidates.push(fromConfig.stdout.trim());
  const base = '/usr/lib/postgresql';
  if (existsSync(base)) {
    const versions = readdirSync(base).sort((a, b) => Number(b) - Number(a) || b.localeCompare(a));
    candidates.push(...versions.map((v) => join(base, v, 'bin')));
  }
  const complete = (dir: string) => ['initdb', 'pg_ctl', 'postgres', 'psql'].every((b) => existsSync(join(dir, b)));
  return candidates.find(complete) ?? null;
}

export interface PostgresServer {
  readonly port: number;
  /** The superuser's URL of database `name` (default `postgres`). */
  url(name?: string): string;
  /** A fresh, empty database; returns its URL. */
  createDatabase(): Promise<string>;
  /** Run one statement as the superuser on the `postgres` database. */
  admin<T extends pg.QueryResultRow = pg.QueryResultRow>(sql: string, params?: unknown[]): Promise<pg.QueryResult<T>>;
  /**
   * Terminate every backend of `applicationName` in database `database`, synchronously
   * (psql in a child process, waiting until each backend has exited): the caller's event
   * loop has not yet seen those connections close when this returns.
   */
  terminateSync(database: string, applicationName: string): number;
  /** Shut the server down (fast: connections are closed), keeping its data… */
  pause(): Promise<void>;
  /** …and start it again on the same port. */
  resume(): Promise<void>;
  /** Stop the server (immediate) and remove its directory. */
  stop(): Promise<void>;
}

interface RunAs {
  uid?: number;
  gid?: number;
}

/** `nobody` (or uid/gid 65534) when running as root; nothing otherwise. */
function unprivileged(): RunAs {
  if (process.getuid?.() !== 0) return {};
  const line = readFileSync('/etc/passwd', 'utf8')
    .split('\n')
    .find((l) => l.startsWith('nobody:'));
  const [, , uid, gid] = line?.split(':') ?? [];
  return { uid: Number(uid ?? 65534), gid: Number(gid ?? 65534) };
}

function run(bin: string, args: string[], as: RunAs, cwd: string): string {
  try {
    return execFileSync(bin, args, { ...as, cwd, encoding: 'utf8', stdio: 'pipe', env: { ...process.env, HOME: cwd, LC_ALL: 'C' } });
  } catch (err) {
    const e = err as { stderr?: string; stdout?: string; message: string };
    throw new Error(`${bin} ${args.join(' ')} failed: ${e.stderr || e.stdout || e.message}`);
  }
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.once('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const { port } = srv.address() as { port: number };
      srv.close(() => resolve(port));
    });
  });
}

/** Every server started by this process, stopped on exit should a test file forget. */
const running = new Set<() => void>();
process.once('exit', () => {
  for (const stop of running) stop();
});

export interface StartPostgresOptions {
  /** `max_connections` (default 60). */
  maxConnections?: number;
  /** Listen on this port instead of a free one. */
  port?: number;
}

/** Start a server; throws when the binaries are absent (check `findPostgres()` first). */
export async function startPostgres(opts: StartPostgresOptions = {}): Promise<PostgresServer> {
  const bin = findPostgres();
  if (!bin) throw new Error(POSTGRES_MISSING);
  const as = unprivileged();
  const dir = mkdtempSync(join(tmpdir(), 'agentd-pg-'));
  const data = join(dir, 'data');
  mkdirSync(data, { mode: 0o700 });
  chmodSync(dir, 0o755);
  if (as.uid !== undefined) {
    chownSync(dir, as.uid, as.gid!);
    chownSync(data, as.uid, as.gid!);
  }
  run(join(bin, 'initdb'), ['-D', data, '-U', 'postgres', '--auth=trust', '-E', 'UTF8', '--locale=C', '--no-sync'], as, dir);

  const log = join(dir, 'server.log');
  // Tests need no durability across power loss: fsync off keeps them fast on a shared machine.
  const startOn = (port: number) => {
    const options = [
      `-c listen_addresses=127.0.0.1 -p ${port}`,
      `-c unix_socket_directories=${dir}`,
      '-c fsync=off -c synchronous_commit=off -c full_page_writes=off',
      `-c max_connections=${opts.maxConnections ?? 60}`,
    ].join(' ');
    run(join(bin, 'pg_ctl'), ['-D', data, '-l', log, '-w', '-t', '60', '-o', options, 'start'], as, dir);
  };
  let port = 0;
  for (let attempt = 1; ; attempt++) {
    port = opts.port ?? (await freePort());
    try {
      startOn(port);
      break;
    } catch (err) {
      // A port taken between freePort() and the bind: try another.
      if (attempt >= 3 || opts.port !== undefined) throw new Error(`${(err as Error).message}\n${existsSync(log) ? readFileSync(log, 'utf8') : ''}`);
    }
  }

  const stopSync = () => {
    spawnSync(join(bin, 'pg_ctl'), ['-D', data, '-m', 'immediate', '-w', 'stop'], { ...as, cwd: dir, stdio: 'ignore' });
    rmSync(dir, { recursive: true, force: true });
  };
  running.add(stopSync);

  const url = (name = 'postgres') => `postgres://postgres@127.0.0.1:${port}/${name}`;
  let databases = 0;
  const admin = async <T extends pg.QueryResultRow>(sql: string, params?: unknown[]) => {
    const client = new pg.Client({ connectionString: url() });
    await client.connect();
    try {
      return await client.query<T>(sql, params);
    } finally {
      await client.end();
    }
  };
  return {
    port,
    url,
    admin,
    async createDatabase() {
      const name = `t${process.pid}_${++databases}`;
      await admin(`CREATE DATABASE ${name}`);
      return url(name);
    },
    terminateSync(database, applicationName) {
      const sql =
        'SELECT count(pg_terminate_backend(pid, 5000)) FROM pg_stat_activity ' +
        `WHERE datname = '${database.replace(/'/g, "''")}' AND application_name = '${applicationName.replace(/'/g, "''")}'`;
      return Number(execFileSync(join(bin, 'psql'), ['-X', '-A', '-t', '-d', url(), '-c', sql], { encoding: 'utf8' }).trim());
    },
    async pause() {
      run(join(bin, 'pg_ctl'), ['-D', data, '-m', 'fast', '-w', 'stop'], as, dir);
    },
    async resume() {
      startOn(port);
    },
    async stop() {
      running.delete(stopSync);
      stopSync();
    },
  };
}
