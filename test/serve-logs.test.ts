/**
 * The daemon's logs (docs/operations.md#logs): `--log-format json` writes JSON lines,
 * `pretty` human-readable ones, anything else is refused; every failed model call — a
 * provider's 500, a 401, an unreachable provider — is logged with its route, the
 * provider's host:port and the error, never the API key or the URL's query.
 */
import { createServer } from 'node:net';
import { describe, expect, test } from 'vitest';
import { runAgentd, startDaemon, tempDataDir } from './helpers/daemon.js';
import { chunk, sseThenHang, status } from './helpers/fake-openai.js';
import { daemonPool } from './helpers/pool.js';
import { cleanup } from './helpers/session.js';

const pool = daemonPool();
const KEY = 'sk-test-very-secret-key-0123456789';

/** The JSON log lines of a daemon's stderr. */
function jsonLines(stderr: string): Array<Record<string, unknown>> {
  return stderr
    .split('\n')
    .filter((l) => l.trim() !== '')
    .map((l) => JSON.parse(l) as Record<string, unknown>);
}

/** A port nothing listens on. */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as { port: number }).port;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

describe('--log-format', () => {
  test('json writes one JSON object per line; pretty writes readable lines', async () => {
    const dir = tempDataDir();
    try {
      const json = await startDaemon({ dataDir: dir, logLevel: 'info', args: ['--log-format', 'json'] });
      await json.stop();
      const lines = jsonLines(json.stderr());
      expect(lines.find((l) => l.msg === 'listening')).toMatchObject({ level: 30, name: 'agentd' });
      const pretty = await startDaemon({ dataDir: dir, logLevel: 'info', args: ['--log-format', 'pretty'] });
      await pretty.stop();
      const text = pretty.stderr();
      expect(text).toMatch(/INFO.*listening/);
      expect(text.split('\n').filter((l) => l.trim() !== '').some((l) => l.trim().startsWith('{'))).toBe(false);
      expect(() => jsonLines(text)).toThrow();
    } finally {
      cleanup(dir);
    }
  });

  test('an unknown format is refused with exit code 2', async () => {
    const r = await runAgentd(['serve', '--port', '0', '--data-dir', tempDataDir(), '--log-format', 'xml']);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('--log-format: must be pretty or json');
  });
});

describe('failed model calls are logged', () => {
  async function bootRoute(baseURL: string, limits: object = {}) {
    const route = { provider: 'openai', model: 'm', base_url: baseURL, api_key_env: 'TEST_PROVIDER_KEY' };
    const { d, c, dir } = await pool.boot({ approval_policy: 'auto', limits, models: { default: 'r', routes: { r: route } } }, undefined, { TEST_PROVIDER_KEY: KEY });
    const s = (await c.createSession({ cwd: dir })).session_id as string;
    await c.attach(s);
    return { d, c, s };
  }

  async function failedCall(baseURL: string, host: string, code: string, level: number, limits: object = {}) {
    const { d, c, s } = await bootRoute(baseURL, limits);
    const id = await c.submitMessage(s, 'hi');
    expect(await c.waitTurnEnd(s, id, 60_000)).toMatchObject({ type: 'turn_failed', error: { code } });
    const logged = jsonLines(d.stderr()).filter((l) => l.msg === 'model call failed');
    expect(logged).toHaveLength(1);
    expect(logged[0]).toMatchObject({ level, route: 'r', provider: 'openai', model: 'm', host, code, session_id: s });
    expect(typeof logged[0]!.error).toBe('string');
    expect(d.stderr()).not.toContain(KEY);
    return logged[0]!;
  }

  test('a provider answering 500 (after the retries): warn with route, host:port and the error', async () => {
    const fake = await pool.fakeOpenAI();
    fake.enqueue(...Array.from({ length: 4 }, () => status(500, { error: { message: `upstream down (key ${KEY})` } })));
    const entry = await failedCall(fake.baseURL, new URL(fake.baseURL).host, 'provider_error', 40);
    expect(entry.error).toContain('upstream down');
  });

  test('a provider answering 401: error level, code unauthorized', async () => {
    const fake = await pool.fakeOpenAI();
    fake.enqueue(status(401, { error: { message: 'bad key' } }));
    await failedCall(fake.baseURL, new URL(fake.baseURL).host, 'unauthorized', 50);
  });

  test('an unreachable provider: the log names its host:port', async () => {
    const port = await closedPort();
    const entry = await failedCall(`http://127.0.0.1:${port}/v1`, `127.0.0.1:${port}`, 'provider_unavailable', 40);
    // The turn's own error names the host too.
    expect(entry.error).toContain(`could not reach the provider at 127.0.0.1:${port}`);
  });

  test('a stream that goes quiet (the idle timeout): logged with its route and host', async () => {
    const fake = await pool.fakeOpenAI();
    fake.enqueue(sseThenHang([chunk.text('thinking')]));
    const entry = await failedCall(fake.baseURL, new URL(fake.baseURL).host, 'model_idle_timeout', 40, { model_idle_timeout_ms: 1000 });
    expect(entry.error).toContain('sent nothing for 1000 ms');
  });
});
