/**
 * GET /metrics of a real daemon (docs/operations.md "Metrics"), scraped over HTTP and
 * parsed as Prometheus text: no token, no metrics (unless server.metrics_public); the
 * values move as real turns go by — a failed model call, a tool call behind an approval,
 * a manual compaction — and the process, event-loop and commit series are there.
 */
import { afterEach, describe, expect, test } from 'vitest';
import { connect, type TestClient } from './helpers/client.js';
import { startDaemon, type Daemon } from './helpers/daemon.js';
import { fixtureServer } from './helpers/mcp.js';
import { fetchMetrics, parsePrometheus, scrape } from './helpers/prometheus.js';
import { cleanup, tempDir } from './helpers/session.js';

const daemons: Daemon[] = [];
const clients: TestClient[] = [];
const dirs: string[] = [];
afterEach(async () => {
  for (const c of clients.splice(0)) await c.close().catch(() => {});
  for (const d of daemons.splice(0)) await d.stop('SIGKILL').catch(() => {});
  dirs.splice(0).forEach(cleanup);
});

async function boot(config: object = {}, token?: string | null): Promise<Daemon> {
  const d = await startDaemon({ config, ...(token !== undefined && { token }) });
  daemons.push(d);
  return d;
}

async function client(d: Daemon): Promise<TestClient> {
  const c = await connect(d);
  clients.push(c);
  return c;
}

describe('who may read /metrics', () => {
  test('no token, a wrong token or a token in the query: 401; the token as Bearer: 200 in the text format', async () => {
    const d = await boot({}, 'the-client-token-0123456789');
    const none = await fetchMetrics(d.httpUrl, null);
    expect(none.status).toBe(401);
    expect(none.headers.get('www-authenticate')).toMatch(/^Bearer/);
    expect(await none.text()).not.toContain('agentd_');
    expect((await fetchMetrics(d.httpUrl, 'wrong-token')).status).toBe(401);
    expect((await fetch(`${d.httpUrl}/metrics?token=${d.token}`)).status).toBe(401);
    const ok = await fetchMetrics(d.httpUrl, d.token);
    expect(ok.status).toBe(200);
    expect(ok.headers.get('content-type')).toMatch(/^text\/plain; version=0\.0\.4/);
    const m = parsePrometheus(await ok.text());
    expect(m.types.get('agentd_turns_total')).toBe('counter');
    expect(m.types.get('agentd_commit_seconds')).toBe('histogram');
    expect(m.types.get('agentd_sessions')).toBe('gauge');
    // process and event-loop delay metrics (prom-client's defaults)
    expect(m.value('process_resident_memory_bytes')).toBeGreaterThan(0);
    expect(m.types.get('nodejs_eventloop_lag_p99_seconds')).toBe('gauge');
    expect(m.types.has('agentd_leases_owned')).toBe(false); // cluster series only in cluster mode
    expect((await fetch(`${d.httpUrl}/metrics`, { method: 'POST', headers: { authorization: `Bearer ${d.token}` } })).status).toBe(405);
  });

  test('server.metrics_public: anyone may read them', async () => {
    const d = await boot({ server: { metrics_public: true } }, 'the-client-token-0123456789');
    const res = await fetchMetrics(d.httpUrl, null);
    expect(res.status).toBe(200);
    expect(parsePrometheus(await res.text()).types.get('agentd_connections')).toBe('gauge');
  });
});

describe('the values move with real turns', () => {
  test('a failed model call, a tool call behind an approval, a compaction', async () => {
    const d = await boot({ approval_policy: 'ask' });
    const c = await client(d);
    const cwd = tempDir('agentd-metrics-');
    dirs.push(cwd);
    const before = await scrape(d);
    expect(before.value('agentd_connections')).toBe(1);
    expect(before.sum('agentd_turns_total')).toBe(0);

    const s = (await c.createSession({ cwd, approval_policy: 'ask' })).session_id as string;
    await c.attach(s);
    // 1. A turn whose model call fails.
    const failed = await c.waitTurnEnd(s, await c.submitMessage(s, '!fail'));
    expect(failed.type).toBe('turn_failed');
    let m = await scrape(d);
    expect(m.value('agentd_model_calls_total', { route: 'scripted', outcome: 'scripted_failure' })).toBe(1);
    expect(m.value('agentd_model_calls_total', { route: 'scripted', outcome: 'ok' })).toBe(0);
    expect(m.value('agentd_turns_total', { route: 'scripted', outcome: 'failed' })).toBe(1);
    expect(m.value('agentd_model_call_seconds_count', { route: 'scripted' })).toBe(1);
    expect(m.value('agentd_sessions', { status: 'idle' })).toBe(1);

    // 2. A tool call waiting for an approval, then approved.
    const id = await c.submitMessage(s, '!sh echo metrics');
    const request = await c.waitForEvent(s, (msg) => msg.type === 'exec_approval_request');
    m = await scrape(d);
    expect(m.value('agentd_approvals_pending')).toBe(1);
    expect(m.value('agentd_sessions', { status: 'awaiting_approval' })).toBe(1);
    await c.submit(s, 'approve-1', { type: 'exec_approval', id: request.approval_id, decision: 'approve' });
    expect((await c.waitTurnEnd(s, id)).type).toBe('turn_complete');
    m = await scrape(d);
    expect(m.value('agentd_approvals_pending')).toBe(0);
    expect(m.value('agentd_approvals_total', { decision: 'approve' })).toBe(1);
    expect(m.value('agentd_tool_calls_total', { tool: 'shell', status: 'ok' })).toBe(1);
    expect(m.value('agentd_turns_total', { route: 'scripted', outcome: 'complete' })).toBe(1);
    expect(m.value('agentd_model_calls_total', { route: 'scripted', outcome: 'ok' })).toBe(2); // the call, then its answer
    const input = m.value('agentd_tokens_total', { route: 'scripted', kind: 'input' });
    const output = m.value('agentd_tokens_total', { route: 'scripted', kind: 'output' });
    expect(input).toBeGreaterThan(0);
    expect(output).toBeGreaterThan(0);

    // 3. A manual compaction: a turn of its own with a summarization call.
    await c.submit(s, 'compact-1', { type: 'capability_command', capability: 'session', command: 'compact' });
    expect((await c.waitTurnEnd(s, 'compact-1')).type).toBe('turn_complete');
    const after = await scrape(d);
    expect(after.value('agentd_compactions_total', { reason: 'manual' })).toBe(1);
    expect(after.value('agentd_model_calls_total', { route: 'scripted', outcome: 'ok' })).toBe(3);
    expect(after.value('agentd_turns_total', { route: 'scripted', outcome: 'complete' })).toBe(2);
    expect(after.value('agentd_tokens_total', { route: 'scripted', kind: 'input' })).toBeGreaterThan(input);

    // The commit path: batches counted, a tick's commit timed (deltas go through the shared writer).
    expect(after.value('agentd_batches_committed_total')).toBeGreaterThanOrEqual(c.batches(s).length);
    expect(after.value('agentd_commit_seconds_count')).toBeGreaterThan(0);
    expect(after.value('agentd_commit_sessions_count')).toBe(after.value('agentd_commit_seconds_count'));
    expect(after.value('agentd_commit_sessions_bucket', { le: '+Inf' })).toBe(after.value('agentd_commit_seconds_count'));
    expect(after.value('agentd_commit_seconds_sum')).toBeGreaterThan(0);
  }, 60_000);

  test('an MCP server shows in agentd_mcp_servers by state', async () => {
    const d = await boot({ approval_policy: 'auto', mcp_servers: { fx: fixtureServer('normal', { approval: 'auto' }) } });
    const c = await client(d);
    const cwd = tempDir('agentd-metrics-mcp-');
    dirs.push(cwd);
    const s = (await c.createSession({ cwd })).session_id as string;
    await c.attach(s);
    const end = await c.waitTurnEnd(s, await c.submitMessage(s, '!mcp fx__echo {"text":"hi"}'));
    expect(end.type).toBe('turn_complete');
    const m = await scrape(d);
    expect(m.value('agentd_mcp_servers', { state: 'ready' })).toBe(1);
    expect(m.value('agentd_tool_calls_total', { tool: 'fx__echo', status: 'ok' })).toBe(1);
  }, 30_000);
});
