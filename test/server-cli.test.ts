/** `agentd serve`: start-up, data dir files, tokens, config validation, shutdown. */
import { chmodSync, readFileSync, rmSync, statSync, existsSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { connect } from './helpers/client.js';
import { ROOT, runAgentd, startDaemon, tempDataDir } from './helpers/daemon.js';

const dirs: string[] = [];
const freshDir = (): string => {
  const d = tempDataDir();
  dirs.push(d);
  return d;
};
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

const mode = (path: string): number => statSync(path).mode & 0o777;

describe('agentd serve', () => {
  it('prints the real port, writes daemon.json and a 0600 token into a new 0700 data dir', async () => {
    const dataDir = join(freshDir(), 'nested', 'data');
    const d = await startDaemon({ dataDir });
    try {
      expect(d.url).toMatch(/^ws:\/\/127\.0\.0\.1:\d+$/);
      expect(d.port).toBeGreaterThan(0);
      expect(mode(dataDir)).toBe(0o700);
      expect(mode(join(dataDir, 'token'))).toBe(0o600);
      expect(d.token).toMatch(/^[A-Za-z0-9_-]{32,}$/);
      const info = JSON.parse(readFileSync(join(dataDir, 'daemon.json'), 'utf8')) as Record<string, unknown>;
      expect(info).toMatchObject({ url: d.url, pid: d.pid, auth: true });
      expect(mode(join(dataDir, 'daemon.json'))).toBe(0o600);
      expect(existsSync(join(dataDir, 'agentd.db'))).toBe(true);
      const c = await connect(d);
      await c.close();
    } finally {
      expect(await d.stop()).toBe(0);
    }
    // A clean stop removes daemon.json; the token stays for the next start.
    expect(existsSync(join(dataDir, 'daemon.json'))).toBe(false);
    const token = readFileSync(join(dataDir, 'token'), 'utf8').trim();
    const again = await startDaemon({ dataDir });
    try {
      expect(again.token).toBe(token);
    } finally {
      await again.stop('SIGINT');
    }
  });

  it('tightens an existing data dir to 0700 and its database files to 0600 at start', async () => {
    const dataDir = freshDir();
    const first = await startDaemon({ dataDir });
    await first.stop();
    chmodSync(dataDir, 0o755);
    chmodSync(join(dataDir, 'agentd.db'), 0o644);
    writeFileSync(join(dataDir, 'agentd.db-wal'), '', { mode: 0o644 });
    chmodSync(join(dataDir, 'agentd.db-wal'), 0o644);
    const again = await startDaemon({ dataDir });
    try {
      expect(mode(dataDir)).toBe(0o700);
      expect(mode(join(dataDir, 'agentd.db'))).toBe(0o600);
      for (const f of ['agentd.db-wal', 'agentd.db-shm']) {
        if (existsSync(join(dataDir, f))) expect(mode(join(dataDir, f))).toBe(0o600);
      }
      const c = await connect(again);
      await c.close();
    } finally {
      expect(await again.stop()).toBe(0);
    }
  });

  it('takes the token from --token and from AGENTD_TOKEN, and stores it for local clients', async () => {
    const dataDir = freshDir();
    const d = await startDaemon({ dataDir, token: 'flag-token-123' });
    try {
      expect(readFileSync(join(dataDir, 'token'), 'utf8').trim()).toBe('flag-token-123');
      await (await connect(d)).close();
    } finally {
      await d.stop();
    }
    const e = await startDaemon({ dataDir, env: { AGENTD_TOKEN: 'env-token-456' } });
    try {
      expect(e.token).toBe('env-token-456');
      const c = await connect(e, { token: 'env-token-456' });
      await c.close();
      const bad = await connect(e, { token: 'flag-token-123', hello: false });
      bad.send({ type: 'hello', protocol: 1, token: 'flag-token-123' });
      expect((await bad.closed).code).toBe(4401);
    } finally {
      await e.stop();
    }
  });

  it('serves without tokens under --no-auth on a loopback host', async () => {
    const d = await startDaemon({ token: null });
    try {
      const c = await connect(d, { token: null });
      expect((await c.request({ type: 'list_sessions' })).type).toBe('sessions');
      await c.close();
      const info = JSON.parse(readFileSync(join(d.dataDir, 'daemon.json'), 'utf8')) as Record<string, unknown>;
      expect(info.auth).toBe(false);
    } finally {
      await d.stop();
    }
  });

  it('refuses --no-auth on a non-loopback host (exit 2)', async () => {
    const r = await runAgentd(['serve', '--host', '0.0.0.0', '--port', '0', '--no-auth', '--data-dir', freshDir()]);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/--no-auth.*loopback/);
    expect(r.stdout).not.toMatch(/listening/);
  });

  const badConfigs: Array<[string, string, RegExp]> = [
    ['a bad value', JSON.stringify({ limits: { inbox_capacity: 0 } }), /limits\.inbox_capacity/],
    ['an unknown field', JSON.stringify({ approval_policy: 'auto', bogus: true }), /bogus/],
    ['a bad enum', JSON.stringify({ approval_policy: 'sometimes' }), /approval_policy/],
    ['an unknown default route', JSON.stringify({ models: { default: 'nope' } }), /models\.default/],
    ['invalid JSON', '{"limits": ', /not valid JSON/],
  ];
  it.each(badConfigs)('refuses a config file with %s (exit 2, names the field)', async (_what, text, field) => {
    const dir = freshDir();
    const file = join(dir, 'my-config.json');
    writeFileSync(file, text);
    const r = await runAgentd(['serve', '--port', '0', '--data-dir', dir, '--config', file]);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(field);
    expect(r.stderr).toContain('my-config.json');
  });

  it('reads DATA_DIR/config.json by default and refuses a missing --config file', async () => {
    const dir = freshDir();
    writeFileSync(join(dir, 'config.json'), JSON.stringify({ journal: { synchronous: 'SOMETIMES' } }));
    const r = await runAgentd(['serve', '--port', '0', '--data-dir', dir]);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/journal\.synchronous/);
    const missing = await runAgentd(['serve', '--port', '0', '--data-dir', dir, '--config', join(dir, 'missing.json')]);
    expect(missing.code).toBe(2);
    expect(missing.stderr).toMatch(/missing\.json/);
  });

  it('uses $AGENTD_HOME as the default data dir', async () => {
    const home = join(freshDir(), 'home');
    const r = await runAgentd(['serve', '--port', '0', '--host', '0.0.0.0', '--no-auth'], { AGENTD_HOME: home });
    expect(r.code).toBe(2);
    expect(existsSync(home)).toBe(false); // refused before creating anything
    const d = await startDaemonWithHome(home);
    try {
      expect(existsSync(join(home, 'daemon.json'))).toBe(true);
      expect(mode(home)).toBe(0o700);
    } finally {
      await d.stop();
    }
  });

  it('refuses a second daemon on the same data dir', async () => {
    const d = await startDaemon();
    try {
      const r = await runAgentd(['serve', '--port', '0', '--data-dir', d.dataDir]);
      expect(r.code).toBe(1);
      expect(r.stderr).toMatch(/another agentd/);
    } finally {
      await d.stop();
    }
  });

  it('prints its version', async () => {
    const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { version: string };
    const r = await runAgentd(['--version']);
    expect(r.code).toBe(0);
    expect(r.stdout.trim()).toBe(pkg.version);
  });

  it('on SIGTERM commits, closes clients with 1001 and exits 0; nothing is lost', async () => {
    const dataDir = freshDir();
    const d = await startDaemon({ dataDir, config: { approval_policy: 'auto' } });
    const c = await connect(d);
    const s = await c.createSession();
    await c.attach(s.session_id);
    const id = await c.submitMessage(s.session_id, '!sleep 1500');
    await c.waitForEvent(s.session_id, (m) => m.type === 'agent_message_delta');
    expect(await d.stop()).toBe(0);
    expect((await c.closed).code).toBe(1001);
    const seen = c.batches(s.session_id).map((b) => b.sequence as number);
    expect(seen).toEqual(seen.map((_, i) => i + 1));

    // Everything the client saw is in the journal; the interrupted turn goes on after a restart.
    const again = await startDaemon({ dataDir });
    try {
      const c2 = await connect(again);
      const attached = await c2.attach(s.session_id, { replay_batches: 10_000 });
      expect(attached.head_sequence).toBeGreaterThanOrEqual(seen.length);
      await c2.waitForSequence(s.session_id, seen.length);
      const replayed = c2.batches(s.session_id).slice(0, seen.length);
      expect(replayed).toEqual(c.batches(s.session_id));
      await c2.waitTurnEnd(s.session_id, id, 15_000);
      await c2.close();
    } finally {
      await again.stop();
    }
  });
});

async function startDaemonWithHome(home: string) {
  // startDaemon always passes --data-dir; run with AGENTD_HOME and no --data-dir instead.
  const { spawn } = await import('node:child_process');
  const { BIN } = await import('./helpers/daemon.js');
  const proc = spawn(process.execPath, [BIN, 'serve', '--port', '0'], {
    cwd: ROOT,
    env: { ...process.env, AGENTD_HOME: home, AGENTD_LOG_LEVEL: 'warn', AGENTD_TOKEN: undefined },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  await new Promise<void>((resolve, reject) => {
    let out = '';
    proc.stdout.on('data', (b: Buffer) => {
      out += b.toString();
      if (out.includes('agentd listening on')) resolve();
    });
    proc.on('exit', (code) => reject(new Error(`exited ${code}`)));
  });
  return {
    stop: () =>
      new Promise<void>((resolve) => {
        proc.on('exit', () => resolve());
        proc.kill('SIGTERM');
      }),
  };
}
