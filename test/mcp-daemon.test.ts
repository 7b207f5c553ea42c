/**
 * MCP servers through a real daemon (docs/tools.md): the reference servers
 * (server-filesystem, server-everything over stdio and Streamable HTTP) and the
 * misbehaving fixture, driven by the OpenAI-compatible fake (test/helpers/fake-openai.ts)
 * or the scripted model's `!mcp TOOL JSON`. Round trip, filtered tool list, approval under
 * `ask`, a long call interrupted, a server killed mid-call, a server that never starts,
 * `session tools`, and a kill -9 with a call in flight (outcome unknown, no orphans).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { connect, type Msg, type TestClient } from './helpers/client.js';
import { startDaemon, type Daemon } from './helpers/daemon.js';
import { openSession, startLive, stopLive, withRestarts, type Live } from './helpers/live.js';
import { chunk, sse, startFakeOpenAI, type FakeOpenAI, type RecordedRequest } from './helpers/fake-openai.js';
import { alive, BASE_ENV, EVERYTHING, everythingServer, FILESYSTEM, fixtureServer } from './helpers/mcp.js';
import { freePort, waitUntil } from './helpers/process.js';
import { cleanup, tempDir } from './helpers/session.js';

const toolCall = (id: string, name: string, args: object) => [chunk.role(), chunk.tool(0, { id, name, args: JSON.stringify(args) }), chunk.finish('tool_calls')];
const reply = (text: string) => [chunk.role(), chunk.text(text), chunk.finish('stop')];
const toolNames = (req: RecordedRequest): string[] => (req.body.tools ?? []).map((t: { function: { name: string } }) => t.function.name);

/** The fixture server as `fx`, logging to CWD/fixture.log. */
function fixtureConfig(cwd: string): unknown {
  const log = join(cwd, 'fixture.log');
  writeFileSync(log, '');
  return { approval_policy: 'auto', mcp_servers: { fx: fixtureServer('normal', { env: { FIXTURE_LOG: log } }) } };
}

async function turn(c: TestClient, sid: string, text: string, timeoutMs = 20_000): Promise<{ id: string; end: Msg }> {
  const id = await c.submitMessage(sid, text);
  return { id, end: await c.waitTurnEnd(sid, id, timeoutMs) };
}

describe('MCP tools in sessions, through the daemon and an OpenAI-compatible model', () => {
  let fake: FakeOpenAI;
  let daemon: Daemon;
  let c: TestClient;
  let cwd: string;
  let httpServer: ChildProcess;
  let httpPort: number;

  beforeAll(async () => {
    fake = await startFakeOpenAI();
    cwd = tempDir('agentd-mcp-cwd-');
    writeFileSync(join(cwd, 'notes.txt'), 'the secret word is teal');
    httpPort = await freePort();
    httpServer = spawn(process.execPath, [EVERYTHING, 'streamableHttp'], { env: { ...BASE_ENV, PORT: String(httpPort) }, stdio: ['ignore', 'ignore', 'pipe'] });
    await new Promise<void>((resolve, reject) => {
      let err = '';
      const timer = setTimeout(() => reject(new Error(`server-everything (http) did not start: ${err}`)), 15_000);
      httpServer.stderr!.on('data', (d: Buffer) => {
        err += d.toString();
        if (err.includes(`listening on port ${httpPort}`)) {
          clearTimeout(timer);
          resolve();
        }
      });
    });
    daemon = await startDaemon({
      config: {
        approval_policy: 'auto',
        models: { default: 'gpt', routes: { gpt: { provider: 'openai', model: 'fake', base_url: fake.baseURL } } },
        mcp_servers: {
          fs: { command: process.execPath, args: [FILESYSTEM, '.'], tools: ['read_text_file', 'list_directory'] },
          ev: { ...everythingServer(), tools: ['echo', 'get-sum'], approval: 'ask' },
          web: { url: `http://127.0.0.1:${httpPort}/mcp`, tools: ['echo'] },
          hung: { ...fixtureServer('hang'), startup_timeout_ms: 500 },
        },
      },
    });
    c = await connect(daemon);
  }, 60_000);

  afterAll(async () => {
    await c?.close();
    await daemon?.stop();
    httpServer?.kill();
    await fake?.close();
    cleanup(cwd);
  });

  test('a round trip: the filtered tools with their schemas are offered, a call returns the file, a server that never starts is left out with one warning', async () => {
    const sid = await openSession(c, { cwd, approval_policy: 'auto' });
    fake.enqueue(sse(toolCall('call_r1', 'fs__read_text_file', { path: 'notes.txt' })), sse(reply('The word is teal.')));
    const first = fake.requests.length;
    const { end } = await turn(c, sid, 'what is in notes.txt?', 40_000);
    expect(end).toMatchObject({ type: 'turn_complete', last_message: 'The word is teal.', tool_calls: 1, failed_tool_calls: 0 });
    const req = fake.requests[first]!;
    const names = toolNames(req);
    expect(names).toEqual(expect.arrayContaining(['shell', 'delegate', 'fs__read_text_file', 'fs__list_directory', 'ev__echo', 'ev__get-sum', 'web__echo']));
    expect(names).not.toContain('fs__write_file'); // filtered out
    expect(names.filter((n) => n.startsWith('hung__'))).toEqual([]);
    const spec = req.body.tools.find((t: { function: { name: string } }) => t.function.name === 'fs__read_text_file').function;
    expect(spec.parameters).toMatchObject({ type: 'object', properties: { path: { type: 'string' } } });
    const events = c.events(sid);
    expect(events.find((m) => m.type === 'tool_call_begin')).toMatchObject({ tool: 'fs__read_text_file', arguments: { path: 'notes.txt' } });
    expect(events.find((m) => m.type === 'tool_call_end')).toMatchObject({ status: 'ok', output: 'the secret word is teal' });
    const second = fake.requests[first + 1]!;
    expect(second.body.messages).toContainEqual(expect.objectContaining({ role: 'tool', tool_call_id: 'call_r1', content: 'the secret word is teal' }));
    const warnings = events.filter((m) => m.type === 'warning').map((m) => m.message as string);
    // One warning per failed start: the first model call's; on a loaded machine the 1 s
    // backoff may pass before the second model call, which then tries (and warns) once more.
    const hung = warnings.filter((w) => w.includes('"hung"'));
    expect(hung.length).toBeGreaterThanOrEqual(1);
    expect(hung.length).toBeLessThanOrEqual(fake.requests.length - first);
    for (const w of hung) expect(w).toMatch(/did not start within 500 ms/);
  }, 60_000);

  test('approval "ask" on a server holds its calls under session policy auto; approve runs it; the HTTP server answers too', async () => {
    const sid = await openSession(c, { cwd, approval_policy: 'auto' });
    fake.enqueue(
      sse(toolCall('call_a1', 'ev__echo', { message: 'hi there' })),
      sse(toolCall('call_a2', 'web__echo', { message: 'over http' })),
      sse(reply('done')),
    );
    const id = await c.submitMessage(sid, 'echo twice');
    const request = await c.waitForEvent(sid, (m) => m.type === 'exec_approval_request', 40_000);
    expect(request).toMatchObject({ tool: 'ev__echo', arguments: { message: 'hi there' }, cwd });
    const listed = await c.ok({ type: 'list_sessions' });
    expect((listed.sessions as Msg[]).find((d) => d.session_id === sid)).toMatchObject({ status: 'awaiting_approval', pending_approval: { approval_id: request.approval_id } });
    await c.submit(sid, 'ap1', { type: 'exec_approval', id: request.approval_id, decision: 'approve' });
    const end = await c.waitTurnEnd(sid, id, 40_000);
    expect(end).toMatchObject({ type: 'turn_complete', tool_calls: 2, failed_tool_calls: 0 });
    const ends = c.events(sid).filter((m) => m.type === 'tool_call_end');
    expect(ends.map((m) => [m.status, m.output])).toEqual([
      ['ok', 'Echo: hi there'],
      ['ok', 'Echo: over http'],
    ]);
    // web has no approval setting: the session's policy (auto) lets it run at once.
    expect(c.events(sid).filter((m) => m.type === 'exec_approval_request')).toHaveLength(1);
  }, 60_000);

  test('`session tools` lists every tool with its source, server and status', async () => {
    const sid = await openSession(c, { cwd, approval_policy: 'ask' });
    await c.submit(sid, 'tools1', { type: 'capability_command', capability: 'session', command: 'tools' });
    const out = await c.waitForEvent(sid, (m) => m.type === 'capability_output' && m.command === 'tools');
    const tools = out.output.tools as Array<Record<string, unknown>>;
    expect(tools).toContainEqual({ name: 'shell', source: 'builtin', status: 'available', approval: 'session' });
    expect(tools).toContainEqual({ name: 'delegate', source: 'builtin', status: 'available', approval: 'auto' });
    expect(tools).toContainEqual(expect.objectContaining({ name: 'fs__read_text_file', source: 'mcp', server: 'fs', status: 'available' }));
    const servers = out.output.mcp_servers as Array<Record<string, unknown>>;
    expect(servers.map((x) => x.server).sort()).toEqual(['ev', 'fs', 'hung', 'web']);
    expect(servers.find((x) => x.server === 'hung')).toMatchObject({ state: 'failed', error: expect.stringContaining('did not start') });
    const fs = servers.find((x) => x.server === 'fs')!;
    expect(fs).toMatchObject({ state: 'ready', transport: 'stdio' });
    expect((fs.tools as string[]).sort()).toEqual(['fs__list_directory', 'fs__read_text_file']);
  }, 30_000);
});

describe('MCP failure paths through the daemon (the fixture server, the scripted model)', () => {
  let live: Live;
  let c: TestClient;
  let cwd: string;
  let log: string;
  let daemon: Daemon;

  beforeAll(async () => {
    live = await startLive('agentd-mcp-fx-', fixtureConfig);
    ({ c, cwd, daemon } = live);
    log = join(cwd, 'fixture.log');
  }, 30_000);

  afterAll(() => stopLive(live));

  test('interrupting a long MCP call sends notifications/cancelled and ends the turn interrupted; the server stays usable', async () => {
    const sid = await openSession(c, { cwd, approval_policy: 'auto' });
    await c.submitMessage(sid, '!mcp fx__slow {"ms": 30000}');
    const begin = await c.waitForEvent(sid, (m) => m.type === 'tool_call_begin', 20_000);
    expect(begin).toMatchObject({ tool: 'fx__slow', arguments: { ms: 30000 } });
    const started = await c.waitForEvent(sid, (m) => m.type === 'turn_started');
    await new Promise((r) => setTimeout(r, 300)); // the call reaches the server
    const t0 = Date.now();
    await c.submit(sid, 'int1', { type: 'interrupt', turn_id: started.turn_id });
    const end = await c.waitTurnEnd(sid, 'int1');
    expect(end).toMatchObject({ type: 'turn_interrupted' });
    expect(c.events(sid).some((m) => m.type === 'turn_complete')).toBe(false);
    expect(Date.now() - t0).toBeLessThan(2000);
    expect(c.events(sid).find((m) => m.type === 'tool_call_end')).toMatchObject({ status: 'interrupted' });
    await waitUntil(() => readFileSync(log, 'utf8').includes('cancelled slow'), 5000, 'the server saw notifications/cancelled');
    const again = await turn(c, sid, '!mcp fx__echo {"text": "still here"}');
    expect(again.end).toMatchObject({ type: 'turn_complete', last_message: 'tool fx__echo answered: echo: still here' });
  }, 60_000);

  test('a server killed mid-call: the call fails with a clear error, a warning names the server, the next call starts it again', async () => {
    const sid = await openSession(c, { cwd, approval_policy: 'auto' });
    const crash = await turn(c, sid, '!mcp fx__crash {}');
    expect(crash.end.type).toBe('turn_complete');
    const end = c.events(sid).find((m) => m.type === 'tool_call_end')!;
    expect(end.status).toBe('error');
    expect(end.output).toMatch(/MCP server "fx": connection lost during the call/);
    // The next model call (after its backoff) starts the server again; the failure was journaled once.
    await new Promise((r) => setTimeout(r, 1200));
    const next = await turn(c, sid, '!mcp fx__echo {"text": "back"}');
    expect(next.end).toMatchObject({ last_message: 'tool fx__echo answered: echo: back' });
    const warnings = c.events(sid).filter((m) => m.type === 'warning' && String(m.message).includes('MCP server "fx"'));
    expect(warnings).toHaveLength(1);
    // The daemon is fine.
    expect((await daemon.healthz()).ok).toBe(true);
  }, 60_000);
});

describe('MCP and kill -9', () => {
  test('a call in flight gets "outcome unknown" after the restart and is not run again; the server process does not outlive the daemon', async () => {
    await withRestarts('agentd-mcp-kill-', fixtureConfig, async (r) => {
      const log = join(r.cwd, 'fixture.log');
      const sid = await openSession(r.c, { cwd: r.cwd, approval_policy: 'auto' });
      const id = await r.c.submitMessage(sid, '!mcp fx__slow {"ms": 60000}');
      await r.c.waitForEvent(sid, (m) => m.type === 'tool_call_begin', 20_000);
      await waitUntil(() => /started \d+/.test(readFileSync(log, 'utf8')), 10_000, 'the fixture started');
      await new Promise((res) => setTimeout(res, 300));
      const pid = Number(/started (\d+)/.exec(readFileSync(log, 'utf8'))![1]);
      expect(alive(pid)).toBe(true);
      await r.restart('SIGKILL');
      await waitUntil(() => !alive(pid), 5000, 'the MCP server ended with the daemon');
      const c = r.c;
      await c.attach(sid, { replay_batches: 1000 });
      const end = await c.waitTurnEnd(sid, id, 20_000);
      expect(end.type).toBe('turn_complete');
      const toolEnd = c.events(sid).find((m) => m.type === 'tool_call_end')!;
      expect(toolEnd).toMatchObject({ status: 'error' });
      expect(toolEnd.output).toMatch(/outcome is unknown and it was not run again/);
      // One call, begun once; the next model call may start the server again (a new process).
      expect(c.events(sid).filter((m) => m.type === 'tool_call_begin')).toHaveLength(1);
      expect(c.events(sid).filter((m) => m.type === 'tool_call_end')).toHaveLength(1);
    });
  }, 90_000);
});
