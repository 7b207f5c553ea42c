/** MCP failure paths with the misbehaving fixture server and server-everything: start-up failures, crashes, aborts, timeouts, list_changed. */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, test } from 'vitest';
import type { McpManager } from '../src/mcp/manager.js';
import { byName, context, everythingServer, fixtureServer, manager, removeWorkDirs, waitFor, workDir } from './helpers/mcp.js';

afterAll(removeWorkDirs);

async function using<T>(m: McpManager, body: (m: McpManager) => Promise<T>): Promise<T> {
  try {
    return await body(m);
  } finally {
    await m.close();
  }
}

function logOf(cwd: string): string {
  try {
    return readFileSync(join(cwd, 'fixture.log'), 'utf8');
  } catch {
    return '';
  }
}

describe('MCP servers that fail', () => {
  test('a server that hangs at initialize: startup timeout, one warning per failure, others unaffected, backoff then retry', async () => {
    const cwd = workDir();
    const m = manager(
      { hung: fixtureServer('hang', { startup_timeout_ms: 400 }), ok: fixtureServer('normal') },
      { backoff: { baseMs: 5000, maxMs: 20000 } },
    );
    await using(m, async () => {
      const set = m.toolset(cwd);
      const t0 = Date.now();
      const first = await set.list();
      // Bounded by the startup timeout, not the hung server: well inside the 5 s backoff even
      // when a loaded machine is slow to start the healthy server's process.
      expect(Date.now() - t0).toBeLessThan(4500);
      expect(first.tools.some((t) => t.server === 'hung')).toBe(false);
      expect(first.tools.some((t) => t.spec.name === 'ok__echo')).toBe(true);
      expect(first.warnings).toEqual([{ server: 'hung', kind: 'startup_timeout', message: 'MCP server "hung": did not start within 400 ms' }]);
      const status = set.status().find((s) => s.server === 'hung')!;
      expect(status).toMatchObject({ state: 'failed', starts: 1, error: 'MCP server "hung": did not start within 400 ms' });
      expect(status.retry_at).toBeGreaterThan(Date.now());

      // Within the backoff: not started again, no second warning.
      const again = await set.list();
      expect(again.warnings).toEqual([]);
      expect(set.status().find((s) => s.server === 'hung')!.starts).toBe(1);

      // Another session sharing the server hears about the current failure once too.
      const other = m.toolset(cwd);
      expect((await other.list()).warnings.map((w) => w.server)).toEqual(['hung']);
      expect((await other.list()).warnings).toEqual([]);

      await waitFor(() => Date.now() > status.retry_at!, 8000, 'the backoff to pass');
      const retried = await set.list();
      expect(set.status().find((s) => s.server === 'hung')!.starts).toBe(2);
      expect(retried.warnings).toHaveLength(1); // the second failure
      const backoff = set.status().find((s) => s.server === 'hung')!.retry_at! - Date.now();
      expect(backoff).toBeGreaterThan(5000); // doubled: 10 000 ms from the second failure
    });
  });

  test('a server that exits at once, and a command that does not exist: warnings with the cause', async () => {
    const cwd = workDir();
    const m = manager({ quits: fixtureServer('exit'), missing: { command: 'agentd-no-such-command-xyz' } });
    await using(m, async () => {
      const set = m.toolset(cwd);
      const { tools, warnings } = await set.list();
      expect(tools).toEqual([]);
      expect(warnings).toHaveLength(2);
      // One failure each: the first backoff (1 s by default), not a doubled one.
      for (const s of set.status()) expect(s.retry_at! - Date.now()).toBeLessThanOrEqual(1000);
      const quits = warnings.find((w) => w.server === 'quits')!;
      expect(quits.kind).toBe('start_failed');
      expect(quits.message).toMatch(/^MCP server "quits": .*exit code 3.*fixture: exiting at once/);
      const missing = warnings.find((w) => w.server === 'missing')!;
      expect(missing.kind).toBe('start_failed');
      expect(missing.message).toMatch(/^MCP server "missing": .*exit code 127.*cannot start "agentd-no-such-command-xyz": spawn agentd-no-such-command-xyz ENOENT/);
    });
  });

  test('a server that prints garbage on stdout still works; the noise is counted', async () => {
    const cwd = workDir();
    const m = manager({ noisy: fixtureServer('garbage') });
    await using(m, async () => {
      const { tools, warnings } = await m.toolset(cwd).list();
      expect(warnings).toEqual([]);
      expect(await byName(tools, 'noisy__echo').run({ text: 'x' }, context(cwd))).toEqual({ status: 'ok', output: 'echo: x' });
      // When it does fail, the error says what else it wrote.
      const crashed = await byName(tools, 'noisy__crash').run({}, context(cwd));
      expect(crashed.output).toMatch(/; 3 line\(s\) on stdout that are not JSON-RPC, the first: "this is not JSON-RPC"$/);
    });
  });

  test('a server killed mid-call: the call fails with a clear error, its tools leave the listing with a warning, it restarts when next needed', async () => {
    const cwd = workDir();
    const m = manager({ fx: fixtureServer('normal') }, { backoff: { baseMs: 200, maxMs: 200 } });
    await using(m, async () => {
      const set = m.toolset(cwd);
      const { tools } = await set.list();
      const t0 = Date.now();
      const crashed = await byName(tools, 'fx__crash').run({}, context(cwd));
      expect(Date.now() - t0).toBeLessThan(3000);
      expect(crashed.status).toBe('error');
      expect(crashed.output).toMatch(/^MCP server "fx": connection lost during the call \(exit code 1\); stderr: .*fixture: crashing on purpose$/);
      // A call of a tool listed before the crash: not running.
      expect((await byName(tools, 'fx__echo').run({ text: 'x' }, context(cwd))).output).toMatch(/^MCP server "fx": not running: MCP server "fx": connection closed \(exit code 1\)/);

      const after = await set.list();
      expect(after.tools).toEqual([]);
      expect(after.warnings).toEqual([{ server: 'fx', kind: 'crashed', message: expect.stringMatching(/^MCP server "fx": connection closed \(exit code 1\); stderr: .*fixture: crashing on purpose$/) }]);

      await new Promise((r) => setTimeout(r, 250));
      const restarted = await set.list();
      expect(restarted.warnings).toEqual([]);
      expect(set.status()[0]).toMatchObject({ state: 'ready', starts: 2 });
      expect(await byName(restarted.tools, 'fx__echo').run({ text: 'back' }, context(cwd))).toEqual({ status: 'ok', output: 'echo: back' });
    });
  });

  test('abort mid-call sends notifications/cancelled, resolves at once, the server stays usable', async () => {
    const cwd = workDir();
    const m = manager({ fx: fixtureServer('normal', { env: { FIXTURE_LOG: join(cwd, 'fixture.log') } }) });
    await using(m, async () => {
      const { tools } = await m.toolset(cwd).list();
      const abort = new AbortController();
      const call = byName(tools, 'fx__slow').run({ ms: 20_000 }, context(cwd, abort.signal));
      await new Promise((r) => setTimeout(r, 200));
      const t0 = Date.now();
      abort.abort();
      const result = await call;
      expect(Date.now() - t0).toBeLessThan(200);
      expect(result).toEqual({ status: 'error', output: 'interrupted: the MCP call was cancelled' });
      await waitFor(() => logOf(cwd).includes('cancelled slow'), 3000, 'the server to see notifications/cancelled');
      expect(await byName(tools, 'fx__echo').run({ text: 'still here' }, context(cwd))).toEqual({ status: 'ok', output: 'echo: still here' });
      // Already aborted: nothing is sent.
      expect(await byName(tools, 'fx__echo').run({ text: 'x' }, context(cwd, AbortSignal.abort()))).toEqual({ status: 'error', output: 'interrupted: the MCP call was cancelled' });
    });
  });

  test("server-everything's long-running operation aborted mid-call", async () => {
    const cwd = workDir();
    const m = manager({ everything: everythingServer() });
    await using(m, async () => {
      const { tools } = await m.toolset(cwd).list();
      const abort = new AbortController();
      const call = byName(tools, 'everything__trigger-long-running-operation').run({ duration: 30, steps: 30 }, context(cwd, abort.signal));
      await new Promise((r) => setTimeout(r, 300));
      const t0 = Date.now();
      abort.abort();
      expect((await call).output).toBe('interrupted: the MCP call was cancelled');
      expect(Date.now() - t0).toBeLessThan(200);
      expect(await byName(tools, 'everything__echo').run({ message: 'ok' }, context(cwd))).toEqual({ status: 'ok', output: 'Echo: ok' });
    });
  });

  test('tool_timeout_ms: the call ends with an error and the server is told to cancel', async () => {
    const cwd = workDir();
    const m = manager({ fx: fixtureServer('normal', { tool_timeout_ms: 300, env: { FIXTURE_LOG: join(cwd, 'fixture.log') } }) });
    await using(m, async () => {
      const { tools } = await m.toolset(cwd).list();
      const t0 = Date.now();
      const result = await byName(tools, 'fx__slow').run({ ms: 10_000 }, context(cwd));
      expect(Date.now() - t0).toBeLessThan(2000);
      expect(result).toEqual({ status: 'error', output: 'MCP server "fx": call timed out after 300 ms (notifications/cancelled sent)' });
      await waitFor(() => logOf(cwd).includes('cancelled slow'), 3000, 'the server to see notifications/cancelled');
    });
  });

  test('tools/list_changed is honoured: a tool registered later appears in the next listing', async () => {
    const cwd = workDir();
    const m = manager({ fx: fixtureServer('normal') });
    await using(m, async () => {
      const set = m.toolset(cwd);
      const { tools } = await set.list();
      expect(tools.some((t) => t.spec.name === 'fx__added')).toBe(false);
      expect(await byName(tools, 'fx__add_tool').run({}, context(cwd))).toEqual({ status: 'ok', output: 'ok' });
      const next = await set.list();
      expect(await byName(next.tools, 'fx__added').run({}, context(cwd))).toEqual({ status: 'ok', output: 'added works' });
      expect(set.status()[0]!.tools).toContain('fx__added');
    });
  });
});
