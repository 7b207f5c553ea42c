/**
 * Hostile MCP servers through a real daemon (docs/tools.md, "Limits"), with the raw
 * JSON-RPC fixture test/fixtures/mcp-hostile.mjs and the scripted model's `!mcp TOOL JSON`:
 * a `tools/list_changed` storm is coalesced (few `tools/list` round trips, `list_sessions`
 * keeps answering, memory stays bounded); a schema nested 4 000 levels, 150 000 tools and
 * over-long stdio lines are refused with warnings naming the server while the session's
 * turns go on; and shutting down never cancels an answered `initialize` or `tools/list`.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, test } from 'vitest';
import { connect, type TestClient } from './helpers/client.js';
import { ROOT, startDaemon, type Daemon } from './helpers/daemon.js';
import { openSession } from './helpers/live.js';
import { cleanup, tempDir } from './helpers/session.js';

const HOSTILE = join(ROOT, 'test', 'fixtures', 'mcp-hostile.mjs');
/** The bound the issue asks for: `list_sessions` answered within this, 9 probes in 10 (a loaded CI machine stalls now and then). */
const ANSWER_MS = 200;
const BURST = 20_000;
const BURSTS = 8;

const hostile = (mode: string, log: string, env: Record<string, string> = {}, extra: Record<string, unknown> = {}) => ({
  command: process.execPath,
  args: [HOSTILE, mode],
  env: { FIXTURE_LOG: log, ...env },
  ...extra,
});

function vmRssBytes(pid: number): number {
  const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return Number(m![1]) * 1024;
}

const logLines = (log: string): string[] => readFileSync(log, 'utf8').split('\n').filter(Boolean);

/** Ids of the requests the server answered at start-up and while listing, and the ids it was told were cancelled. */
function cancelledAnswered(log: string): string[] {
  const lines = logLines(log);
  const answered = new Set(lines.filter((l) => /^recv (initialize|tools\/list) /.test(l)).map((l) => l.split(' ')[2]!));
  return lines
    .filter((l) => l.startsWith('recv notifications/cancelled'))
    .map((l) => l.split(' ').pop()!)
    .filter((id) => answered.has(id));
}

interface Probes {
  latencies: number[];
  peakRss: number;
}

/** `list_sessions` every ~100 ms from `c` until `done()`; latencies and the daemon's peak RSS. */
async function probe(c: TestClient, pid: number, done: () => boolean, maxMs = 60_000): Promise<Probes> {
  const out: Probes = { latencies: [], peakRss: 0 };
  const until = Date.now() + maxMs;
  while (!done() && Date.now() < until) {
    const t0 = performance.now();
    await c.ok({ type: 'list_sessions' }, 10_000);
    const took = performance.now() - t0;
    out.latencies.push(took);
    out.peakRss = Math.max(out.peakRss, vmRssBytes(pid));
    await new Promise((r) => setTimeout(r, Math.max(0, 100 - took)));
  }
  return out;
}

function within(latencies: number[], ms: number): number {
  return latencies.filter((l) => l <= ms).length / latencies.length;
}

let daemon: Daemon | undefined;
const clients: TestClient[] = [];
const dirs: string[] = [];

afterEach(async () => {
  for (const c of clients.splice(0)) await c.close();
  await daemon?.stop();
  daemon = undefined;
  for (const d of dirs.splice(0)) cleanup(d);
});

async function start(config: (cwd: string) => unknown): Promise<{ c: TestClient; probeClient: TestClient; cwd: string }> {
  const cwd = tempDir('agentd-mcp-hostile-');
  dirs.push(cwd);
  daemon = await startDaemon({ config: config(cwd) });
  const c = await connect(daemon);
  const probeClient = await connect(daemon);
  clients.push(c, probeClient);
  return { c, probeClient, cwd };
}

async function turn(c: TestClient, sid: string, text: string, timeoutMs = 60_000) {
  const id = await c.submitMessage(sid, text);
  return c.waitTurnEnd(sid, id, timeoutMs);
}

describe('a notifications/tools/list_changed storm', () => {
  test('re-lists are coalesced, list_sessions keeps answering, RSS stays bounded, the turns go on; shutdown cancels no answered request', async () => {
    let log = '';
    const { c, probeClient, cwd } = await start((dir) => {
      log = join(dir, 'storm.log');
      writeFileSync(log, '');
      return { approval_policy: 'auto', mcp_servers: { hx: hostile('storm', log, { BURST: String(BURST), BURSTS: String(BURSTS), GAP_MS: '400' }) } };
    });
    const pid = daemon!.pid;
    const rssBefore = vmRssBytes(pid);
    let calm = 0;
    const baseline = await probe(probeClient, pid, () => ++calm > 10);
    const sid = await openSession(c, { cwd, approval_policy: 'auto' });
    const first = turn(c, sid, '!mcp hx__echo {"text": "first"}');
    const probes = await probe(probeClient, pid, () => logLines(log).includes('storm over'));
    expect(await first).toMatchObject({ type: 'turn_complete', last_message: 'tool hx__echo answered: echo: first' });
    const second = await turn(c, sid, '!mcp hx__echo {"text": "second"}', 20_000);
    expect(second).toMatchObject({ type: 'turn_complete', last_message: 'tool hx__echo answered: echo: second' });

    const lines = logLines(log);
    const sent = lines.filter((l) => l.endsWith(' list_changed')).length * BURST;
    const lists = lines.filter((l) => l.startsWith('recv tools/list ')).length;
    const sorted = [...probes.latencies].sort((a, b) => a - b);
    console.log(
      `before the storm: list_sessions max ${Math.max(...baseline.latencies).toFixed(1)} ms; storm: ${sent} list_changed → ${lists} tools/list; ${probes.latencies.length} list_sessions probes, median ${sorted[sorted.length >> 1]!.toFixed(1)} ms, ` +
        `p90 ${sorted[Math.floor(sorted.length * 0.9)]!.toFixed(1)} ms, max ${sorted[sorted.length - 1]!.toFixed(1)} ms; RSS ${(rssBefore / 2 ** 20).toFixed(0)} → peak ${(probes.peakRss / 2 ** 20).toFixed(0)} MiB`,
    );
    expect(sent).toBe(BURST * BURSTS);
    // One listing at start-up, then per burst at most one running and one queued (a burst may straddle one more).
    expect(lists).toBeLessThanOrEqual(1 + 3 * BURSTS);
    expect(probes.latencies.length).toBeGreaterThanOrEqual(10);
    expect(within(probes.latencies, ANSWER_MS)).toBeGreaterThanOrEqual(0.9);
    expect(probes.peakRss - rssBefore).toBeLessThan(200 * 2 ** 20);

    await daemon!.stop();
    daemon = undefined;
    await new Promise((r) => setTimeout(r, 500)); // the fixture logs what it read before exiting
    expect(logLines(log).some((l) => l.startsWith('recv initialize '))).toBe(true);
    expect(cancelledAnswered(log)).toEqual([]);
  }, 120_000);
});

describe('MCP input bounds', () => {
  test('a schema nested 4 000 levels and 150 000 tools are cut with warnings naming the server; over-long lines fail only that server; the turns go on', async () => {
    const logs: Record<string, string> = {};
    const { c, probeClient, cwd } = await start((dir) => {
      for (const name of ['dp', 'mn', 'bg']) writeFileSync((logs[name] = join(dir, `${name}.log`)), '');
      return {
        approval_policy: 'auto',
        mcp: { max_tools: 512, max_message_bytes: 12 * 1024 * 1024 },
        mcp_servers: {
          dp: hostile('deep', logs.dp!),
          mn: hostile('many', logs.mn!, {}, { startup_timeout_ms: 60_000 }),
          bg: hostile('normal', logs.bg!),
        },
      };
    });
    const sid = await openSession(c, { cwd, approval_policy: 'auto' });
    const warnings = () => c.events(sid).filter((m) => m.type === 'warning').map((m) => String(m.message));

    // Every server's tools are listed for the first model call; the deep tool and the tools past 512 are left out.
    expect(await turn(c, sid, '!mcp dp__echo {"text": "deep"}')).toMatchObject({ type: 'turn_complete', last_message: 'tool dp__echo answered: echo: deep' });
    expect(warnings()).toContainEqual(expect.stringMatching(/^MCP server "dp": tool "deep" left out: its inputSchema nests deeper than 64 levels/));
    expect(warnings()).toContainEqual(expect.stringMatching(/^MCP server "mn": tools left out: it offers more than mcp.max_tools \(512\) tools/));
    expect(await turn(c, sid, '!mcp mn__t509 {"text": "last kept"}')).toMatchObject({ last_message: 'tool mn__t509 answered: echo: last kept' });
    const past = await turn(c, sid, '!mcp mn__t510 {"text": "cut"}');
    expect(past.type).toBe('turn_complete');
    expect(past.last_message).not.toContain('echo: cut');

    // A legitimate 10 MB line (under max_message_bytes) is read while list_sessions keeps answering.
    let bigDone = false;
    const big = turn(c, sid, '!mcp bg__big {"bytes": 10000000}').finally(() => (bigDone = true));
    const probes = await probe(probeClient, daemon!.pid, () => bigDone);
    expect(await big).toMatchObject({ type: 'turn_complete' });
    expect(c.events(sid).filter((m) => m.type === 'tool_call_end').pop()).toMatchObject({ status: 'ok' });
    console.log(`10 MB line: ${probes.latencies.length} probes, max ${Math.max(...probes.latencies).toFixed(1)} ms`);
    // Read in linear time (a quadratic read took seconds of main thread); the rest of the
    // turn (journaling the 1 MiB kept of the result) also runs on it, hence a generous bound.
    expect(Math.max(...probes.latencies)).toBeLessThan(2000);

    // A line over max_message_bytes fails that server, with a warning naming it and the limit.
    const over = await turn(c, sid, '!mcp bg__big {"bytes": 13000000}');
    expect(over.type).toBe('turn_complete');
    const end = c.events(sid).filter((m) => m.type === 'tool_call_end').pop()!;
    expect(end).toMatchObject({ status: 'error' });
    expect(String(end.output)).toMatch(/^MCP server "bg": .*mcp\.max_message_bytes \(12582912 bytes\)/);
    expect(await turn(c, sid, '!say still here')).toMatchObject({ type: 'turn_complete', last_message: 'still here' });
    expect(warnings()).toContainEqual(expect.stringMatching(/^MCP server "bg": .*mcp\.max_message_bytes/));
    expect(await turn(c, sid, '!mcp dp__echo {"text": "again"}')).toMatchObject({ last_message: 'tool dp__echo answered: echo: again' });

    await daemon!.stop();
    daemon = undefined;
    await new Promise((r) => setTimeout(r, 500));
    for (const log of Object.values(logs)) expect(cancelledAnswered(log)).toEqual([]);
  }, 180_000);
});
