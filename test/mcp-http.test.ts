/** MCP over Streamable HTTP: server-everything's HTTP mode on a free loopback port. */
import { spawn, type ChildProcess } from 'node:child_process';
import { createServer as createHttpServer, type IncomingHttpHeaders } from 'node:http';
import { afterEach, describe, expect, test } from 'vitest';
import { BASE_ENV, byName, context, EVERYTHING, manager } from './helpers/mcp.js';
import { freePort } from './helpers/process.js';

const started: ChildProcess[] = [];
afterEach(() => {
  for (const p of started.splice(0)) p.kill('SIGKILL');
});

/** Start server-everything in Streamable HTTP mode; resolves once it listens. */
async function startHttpServer(port: number): Promise<ChildProcess> {
  const proc = spawn(process.execPath, [EVERYTHING, 'streamableHttp'], { env: { ...BASE_ENV, PORT: String(port) }, stdio: ['ignore', 'ignore', 'pipe'] });
  started.push(proc);
  await new Promise<void>((resolve, reject) => {
    let err = '';
    const timer = setTimeout(() => reject(new Error(`server-everything did not listen: ${err}`)), 15_000);
    proc.stderr!.on('data', (d: Buffer) => {
      err += d.toString();
      if (err.includes(`listening on port ${port}`)) {
        clearTimeout(timer);
        resolve();
      }
    });
    proc.once('exit', (code) => reject(new Error(`server-everything exited with ${code}: ${err}`)));
  });
  return proc;
}

describe('MCP over Streamable HTTP', () => {
  test('list and call round trip, one connection for every cwd, abort mid-call', async () => {
    const port = await freePort();
    await startHttpServer(port);
    const m = manager({ web: { url: `http://127.0.0.1:${port}/mcp`, headers: { 'X-Test': 'yes' } } });
    try {
      const set = m.toolset('/tmp');
      const { tools, warnings } = await set.list();
      expect(warnings).toEqual([]);
      expect(await byName(tools, 'web__echo').run({ message: 'over http' }, context('/tmp'))).toEqual({ status: 'ok', output: 'Echo: over http' });
      const image = await byName(tools, 'web__get-tiny-image').run({}, context('/tmp'));
      expect(image.output).toMatch(/\n\[image\/png, \d+ bytes\]\n/);
      expect(set.status()[0]).toMatchObject({ server: 'web', transport: 'http', state: 'ready', starts: 1 });

      const elsewhere = m.toolset('/');
      expect((await elsewhere.list()).tools.length).toBe(tools.length);
      expect(elsewhere.status()[0]!.starts).toBe(1); // the same connection

      const abort = new AbortController();
      const call = byName(tools, 'web__trigger-long-running-operation').run({ duration: 30, steps: 30 }, context('/tmp', abort.signal));
      await new Promise((r) => setTimeout(r, 300));
      const t0 = Date.now();
      abort.abort();
      expect((await call).output).toBe('interrupted: the MCP call was cancelled');
      expect(Date.now() - t0).toBeLessThan(200);
      expect((await byName(tools, 'web__echo').run({ message: 'again' }, context('/tmp'))).output).toBe('Echo: again');
    } finally {
      await m.close();
    }
  });

  test('an HTTP server that is not there: a warning; back: connected; killed mid-call: a clear error and a warning; back again: reconnected', async () => {
    const port = await freePort();
    const m = manager({ web: { url: `http://127.0.0.1:${port}/mcp`, startup_timeout_ms: 3000 } }, { backoff: { baseMs: 100, maxMs: 100 } });
    try {
      const set = m.toolset('/tmp');
      const down = await set.list();
      expect(down.tools).toEqual([]);
      expect(down.warnings).toHaveLength(1);
      expect(down.warnings[0]!.message).toMatch(/^MCP server "web": failed to start: .*(ECONNREFUSED|fetch failed)/);

      const server = await startHttpServer(port);
      await new Promise((r) => setTimeout(r, 150));
      const up = await set.list();
      expect(up.warnings).toEqual([]);
      const call = byName(up.tools, 'web__trigger-long-running-operation').run({ duration: 30, steps: 30 }, context('/tmp'));
      await new Promise((r) => setTimeout(r, 300));
      server.kill('SIGKILL');
      const t0 = Date.now();
      const result = await call;
      expect(Date.now() - t0).toBeLessThan(3000);
      expect(result.status).toBe('error');
      expect(result.output).toMatch(/^MCP server "web": connection lost during the call: .*(ECONNREFUSED|fetch failed)/);
      const after = await set.list();
      expect(after.tools).toEqual([]);
      // One warning: the crash — or, when a loaded machine let the 100 ms backoff pass before
      // this list, the restart it tried then (the server is still gone), counted as a start.
      const kinds = after.warnings.map((w) => w.kind);
      expect(kinds).toHaveLength(1);
      expect(['crashed', 'start_failed']).toContain(kinds[0]);
      expect(after.warnings[0]!.message).toMatch(/^MCP server "web": /);
      const retried = kinds[0] === 'start_failed' ? 1 : 0;

      await startHttpServer(port);
      await new Promise((r) => setTimeout(r, 150));
      const back = await set.list();
      expect(back.warnings).toEqual([]);
      expect(set.status()[0]).toMatchObject({ state: 'ready', starts: 3 + retried });
      expect((await byName(back.tools, 'web__echo').run({ message: 'back' }, context('/tmp'))).output).toBe('Echo: back');
    } finally {
      await m.close();
    }
  });

  test('configured headers are sent; an HTTP error answer is a start-up failure naming the status', async () => {
    const seen: IncomingHttpHeaders[] = [];
    const http = createHttpServer((req, res) => {
      seen.push(req.headers);
      res.writeHead(503, { 'content-type': 'text/plain' }).end('down for maintenance');
    });
    await new Promise<void>((resolve) => http.listen(0, '127.0.0.1', resolve));
    const port = (http.address() as { port: number }).port;
    const m = manager({ web: { url: `http://127.0.0.1:${port}/mcp`, headers: { Authorization: 'Bearer secret-1', 'X-Test': 'yes' } } });
    try {
      const { tools, warnings } = await m.toolset('/tmp').list();
      expect(tools).toEqual([]);
      expect(warnings).toHaveLength(1);
      expect(warnings[0]!.message).toMatch(/^MCP server "web": failed to start: Streamable HTTP error: Error POSTing to endpoint: down for maintenance \(HTTP 503\)$/);
      expect(seen[0]).toMatchObject({ authorization: 'Bearer secret-1', 'x-test': 'yes' });
    } finally {
      await m.close();
      http.close();
    }
  });
});
