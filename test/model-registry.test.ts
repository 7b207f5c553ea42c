/**
 * The model registry: provider clients load their module (and SDK) at their first
 * request (`lazyClient`), and a daemon that runs only the scripted model and no MCP
 * server never loads the OpenAI, Anthropic or MCP SDKs.
 */
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { expect, onTestFinished, test } from 'vitest';
import { lazyClient } from '../src/model/registry.js';
import type { ModelChunk, ModelClient, ModelRequest } from '../src/model/types.js';
import { connect, type TestClient } from './helpers/client.js';
import { startDaemon, type Daemon } from './helpers/daemon.js';
import { cleanup } from './helpers/session.js';

const request = {} as ModelRequest;

function fakeClient(chunks: ModelChunk[]): ModelClient & { calls: number } {
  const client = {
    calls: 0,
    stream(): AsyncIterable<ModelChunk> {
      client.calls += 1;
      return (async function* () {
        yield* chunks;
      })();
    },
  };
  return client;
}

async function drain(it: AsyncIterable<ModelChunk>): Promise<ModelChunk[]> {
  const out: ModelChunk[] = [];
  for await (const c of it) out.push(c);
  return out;
}

test('lazyClient loads once for concurrent first requests and passes the chunks through', async () => {
  const chunks: ModelChunk[] = [{ type: 'text_delta', delta: 'a' }, { type: 'text_delta', delta: 'b' }];
  const inner = fakeClient(chunks);
  let loads = 0;
  const lazy = lazyClient(async () => {
    loads += 1;
    await new Promise((r) => setTimeout(r, 10));
    return inner;
  });
  expect(loads).toBe(0); // nothing loads before the first request
  const [a, b] = await Promise.all([drain(lazy.stream(request)), drain(lazy.stream(request))]);
  expect(a).toEqual(chunks);
  expect(b).toEqual(chunks);
  expect(loads).toBe(1);
  expect(inner.calls).toBe(2);
  // Once loaded, a request is the real client's stream itself (no wrapper per chunk).
  const direct = lazy.stream(request);
  // A wrapping generator would not ask the real client before it is iterated.
  expect(inner.calls).toBe(3);
  expect(await drain(direct)).toEqual(chunks);
  expect(loads).toBe(1);
});

test('a failed load fails that request with its error, and the next request loads again', async () => {
  const inner = fakeClient([{ type: 'text_delta', delta: 'ok' }]);
  let loads = 0;
  const lazy = lazyClient(async () => {
    loads += 1;
    if (loads === 1) throw new Error('cannot load the provider module');
    return inner;
  });
  await expect(drain(lazy.stream(request))).rejects.toThrow('cannot load the provider module');
  expect(await drain(lazy.stream(request))).toEqual([{ type: 'text_delta', delta: 'ok' }]);
  expect(loads).toBe(2);
});

test('a daemon serving a scripted turn without MCP servers loads none of the provider or MCP SDKs', async () => {
  // A module loader hook (node --import) that writes every module URL the daemon loads.
  const dir = mkdtempSync(join(tmpdir(), 'agentd-loads-'));
  onTestFinished(() => cleanup(dir));
  const log = join(dir, 'loaded.txt');
  writeFileSync(
    join(dir, 'hook.mjs'),
    `import { appendFileSync } from 'node:fs';\n` +
      `export async function load(url, context, next) { appendFileSync(${JSON.stringify(log)}, url + '\\n'); return next(url, context); }\n`,
  );
  writeFileSync(
    join(dir, 'register.mjs'),
    `import { register } from 'node:module';\nregister(${JSON.stringify(pathToFileURL(join(dir, 'hook.mjs')).href)});\n`,
  );
  let d: Daemon | undefined;
  let c: TestClient | undefined;
  try {
    d = await startDaemon({ env: { NODE_OPTIONS: `--import=${pathToFileURL(join(dir, 'register.mjs')).href}` } });
    c = await connect(d);
    const s = (await c.createSession({ cwd: dir })).session_id as string;
    await c.attach(s);
    await c.waitTurnEnd(s, await c.submitMessage(s, 'hello'));
    expect(c.events(s).some((m) => m.type === 'turn_complete')).toBe(true);
  } finally {
    await c?.close().catch(() => {});
    await d?.stop('SIGKILL').catch(() => {});
  }
  const loaded = readFileSync(log, 'utf8').split('\n');
  // The hook saw the daemon's own modules (so an empty log cannot pass)…
  expect(loaded.some((u) => u.includes('/node_modules/better-sqlite3/'))).toBe(true);
  expect(loaded.some((u) => u.endsWith('/dist/src/session/host.js'))).toBe(true);
  // …and none of the SDKs that only a provider request or an MCP server needs.
  const sdks = loaded.filter((u) => /\/node_modules\/(openai|@anthropic-ai\/sdk|@modelcontextprotocol\/sdk)\//.test(u));
  expect(sdks).toEqual([]);
});
