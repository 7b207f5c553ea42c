/**
 * What the model sees (docs/context.md), through a real daemon and socket on the scripted
 * model: a small window survives 30 turns of large tool output by compacting (and the
 * journal still replays every original event), manual compaction (idle: a turn of its
 * own; empty: a warning), the circuit breaker and `context_window_exceeded`, the
 * descriptor's `context`, and a kill -9 during a compaction call (a summarizer on a local
 * OpenAI-compatible server that hangs the first time).
 */
import { describe, expect, test } from 'vitest';
import { connect, type Frame, type Msg, type TestClient } from './helpers/client.js';
import { tempDataDir } from './helpers/daemon.js';
import { chunk, sse, sseThenHang, status } from './helpers/fake-openai.js';
import { daemonPool } from './helpers/pool.js';

const pool = daemonPool();
const boot = pool.boot;

const small = { provider: 'scripted', context_window: 2000 };

/** Send `text` and wait for its turn's end. */
async function turn(c: TestClient, s: string, text: string, timeoutMs = 20_000): Promise<Msg> {
  const id = await c.submitMessage(s, text);
  return c.waitTurnEnd(s, id, timeoutMs);
}

describe('automatic compaction', () => {
  test('30 turns of large tool output in a 2000-token window: no turn fails, several compactions, the journal replays every event', async () => {
    const { d, c, dir } = await boot({ approval_policy: 'auto', models: { default: 'small', routes: { small } } });
    const s = (await c.createSession({ cwd: dir })).session_id as string;
    await c.attach(s);
    for (let i = 0; i < 30; i++) {
      // ~1 KB of output per turn (a quarter of the window, kept verbatim, is 500 tokens ≈ 2 KB).
      const end = await turn(c, s, `!sh printf 'turn ${i} %.0s0123456789' $(seq 1 60)`);
      expect(end.type, JSON.stringify(end)).toBe('turn_complete');
      expect(end.last_message).toBe('command exited with code 0');
    }
    const live = c.events(s);
    expect(live.filter((m) => m.type === 'turn_failed')).toEqual([]);
    const compactions = live.filter((m) => m.type === 'context_compacted');
    expect(compactions.length).toBeGreaterThanOrEqual(3);
    for (const m of compactions) {
      expect(m.reason).toBe('auto');
      expect(m.tokens_after).toBeLessThan(m.tokens_before);
      expect(m.items_after).toBeLessThan(m.items_before);
      expect(m.tokens_before).toBeGreaterThan(0.8 * 2000);
      expect(m.summary).toMatch(/^summary: /);
    }
    // The deterministic summary names the summarized user messages (their first 20 characters).
    expect(compactions[0]!.summary).toContain("!sh printf 'turn 0 %");
    // Every model call stayed inside the window: the reported input never passed it.
    for (const m of live.filter((e) => e.type === 'token_usage')) expect(m.usage.input_tokens).toBeLessThanOrEqual(2000);
    // The descriptor's context gauge.
    const listed = await c.ok({ type: 'list_sessions' });
    const desc = (listed.sessions as Frame[]).find((x) => x.session_id === s)!;
    expect(desc.context.context_window).toBe(2000);
    expect(desc.context.estimated_tokens).toBeGreaterThan(0);
    expect(desc.context.estimated_tokens).toBeLessThanOrEqual(2000);

    // A second client replays the journal from the start: every original event is there.
    const c2 = await connect(d);
    const attached = await c2.attach(s, { after_sequence: 0 });
    await c2.waitForSequence(s, attached.head_sequence as number, 20_000);
    const replay = c2.events(s).slice(0, live.length);
    await c2.close();
    expect(replay).toEqual(live);
    expect(replay.filter((m) => m.type === 'tool_call_end')).toHaveLength(30);
    expect(replay.filter((m) => m.type === 'user_message')).toHaveLength(30);
    expect(replay.filter((m) => m.type === 'tool_call_end').every((m) => m.output.includes('0123456789'))).toBe(true);
  }, 180_000);
});

describe('manual compaction', () => {
  test('idle: a turn of its own (turn_started … context_compacted … turn_complete) that keeps nothing verbatim; empty transcript: a warning', async () => {
    const { c, dir } = await boot({ approval_policy: 'auto' });
    const s = (await c.createSession({ cwd: dir })).session_id as string;
    await c.attach(s);
    await c.submit(s, 'compact-empty', { type: 'capability_command', capability: 'session', command: 'compact' });
    const warning = await c.waitForEvent(s, (m, e) => m.type === 'warning' && e.submission_id === 'compact-empty');
    expect(warning.message).toBe('nothing to compact: the transcript is empty');
    expect(c.events(s).some((m) => m.type === 'turn_started')).toBe(false);

    await turn(c, s, 'first question about the parser');
    await turn(c, s, 'second question about the lexer');
    await c.submit(s, 'compact-1', { type: 'capability_command', capability: 'session', command: 'compact' });
    const end = await c.waitTurnEnd(s, 'compact-1');
    expect(end.type).toBe('turn_complete');
    const own = (await c.ok({ type: 'history', session_id: s, before_sequence: 1_000_000 })).batches as Frame[];
    const events = own.flatMap((b) => b.events as Frame[]).filter((e) => e.submission_id === 'compact-1');
    expect(events.map((e) => e.msg.type)).toEqual(['turn_started', 'token_usage', 'context_compacted', 'turn_complete']);
    const compacted = events[2]!.msg;
    expect(compacted).toMatchObject({ reason: 'manual', items_after: 1, summary: 'summary: first question about | second question abou' });
    expect(compacted.items_before).toBe(4);
    expect(compacted.tokens_after).toBeLessThan(compacted.tokens_before);
    // The model now sees the summary alone: the scripted echo finds no user message before this one.
    const after = await turn(c, s, 'third');
    expect(after).toMatchObject({ type: 'turn_complete', last_message: 'echo: third' });
    // session status shows the estimate.
    await c.submit(s, 'status-1', { type: 'capability_command', capability: 'session', command: 'status' });
    const status = await c.waitForEvent(s, (m, e) => m.type === 'capability_output' && e.submission_id === 'status-1');
    expect(status.output.context).toMatchObject({ context_window: null, compaction_failures: 0 });
    expect(status.output.context.estimated_tokens).toBeGreaterThan(0);
  }, 60_000);

  test('during a turn: it runs before the turn\'s next model call', async () => {
    const { c, dir } = await boot({ approval_policy: 'ask' });
    const s = (await c.createSession({ cwd: dir, approval_policy: 'ask' })).session_id as string;
    await c.attach(s);
    await turn(c, s, 'hello there');
    const id = await c.submitMessage(s, '!sh echo hi');
    const request = await c.waitForEvent(s, (m) => m.type === 'exec_approval_request');
    await c.submit(s, 'compact-2', { type: 'capability_command', capability: 'session', command: 'compact' });
    await c.waitForEvent(s, (m, e) => m.type === 'capability_output' && e.submission_id === 'compact-2');
    await c.submit(s, 'ok-1', { type: 'exec_approval', id: request.approval_id, decision: 'approve' });
    const end = await c.waitTurnEnd(s, id);
    expect(end.type).toBe('turn_complete');
    const types = c.events(s).map((m) => m.type);
    const compactedAt = types.indexOf('context_compacted');
    expect(compactedAt).toBeGreaterThan(types.indexOf('tool_call_end'));
    expect(compactedAt).toBeLessThan(types.lastIndexOf('agent_message'));
    expect(c.events(s).find((m) => m.type === 'context_compacted')).toMatchObject({ reason: 'manual', summary: 'summary: hello there | !sh echo hi' });
  }, 60_000);
});

describe('circuit breaker', () => {
  test('after max_failures failed compactions the session stops trying; a call that does not fit fails context_window_exceeded; the session stays usable', async () => {
    const fake = await pool.fakeOpenAI();
    const { c, dir } = await boot({
      approval_policy: 'auto',
      // 3000: the built-in tools' specs alone are over half of a 2000-token window now.
      models: { default: 'small', routes: { small: { ...small, context_window: 3000 }, big: { provider: 'scripted' }, broken: { provider: 'openai', model: 'm', base_url: fake.baseURL } } },
      compaction: { route: 'broken', max_failures: 2 },
    });
    for (let i = 0; i < 10; i++) fake.enqueue(status(400, { error: { message: 'the summarizer is broken' } }));
    const s = (await c.createSession({ cwd: dir })).session_id as string;
    await c.attach(s);
    let failed: Msg | null = null;
    for (let i = 0; i < 12 && !failed; i++) {
      const end = await turn(c, s, `!sh printf 'x%.0s' $(seq 1 1500)`);
      if (end.type === 'turn_failed') failed = end;
    }
    expect(failed).not.toBeNull();
    expect(failed!.error.code).toBe('context_window_exceeded');
    const warnings = c.events(s).filter((m) => m.type === 'warning').map((m) => m.message as string);
    expect(warnings.filter((w) => w.startsWith('context compaction (auto) failed'))).toHaveLength(2);
    expect(warnings[1]).toMatch(/2 failures in a row: automatic compaction is off/);
    // No third attempt: the broken summarizer got exactly two requests.
    expect(fake.requests).toHaveLength(2);
    // A route with a larger window: the session goes on.
    await c.submit(s, 'big-1', { type: 'set_model', route: 'big' });
    await c.waitForEvent(s, (m, e) => m.type === 'model_changed' && e.submission_id === 'big-1');
    expect(await turn(c, s, 'still here?')).toMatchObject({ type: 'turn_complete', last_message: 'echo: still here?' });
  }, 120_000);
});

describe('restart during a compaction call', () => {
  test('kill -9 while the summarizer streams: the turn is resumed, compacts again and completes', async () => {
    const fake = await pool.fakeOpenAI();
    const dir = tempDataDir();
    const config = {
      approval_policy: 'auto',
      models: { default: 'scripted', routes: { summarizer: { provider: 'openai', model: 'sum', base_url: fake.baseURL } } },
      compaction: { route: 'summarizer' },
    };
    const first = await boot(config, dir);
    const s = (await first.c.createSession({ cwd: dir })).session_id as string;
    await first.c.attach(s);
    await turn(first.c, s, 'remember the blue door');
    fake.enqueue(sseThenHang([chunk.text('summary in prog')]));
    await first.c.submit(s, 'compact-k', { type: 'capability_command', capability: 'session', command: 'compact' });
    await first.c.waitForEvent(s, (m, e) => m.type === 'turn_started' && e.submission_id === 'compact-k');
    await first.c.until(() => (fake.requests.length >= 1 ? true : undefined), 10_000, 'the summarization request');
    first.d.proc.kill('SIGKILL');
    await first.d.exited;

    fake.enqueue(sse([chunk.text('The user asked to remember the blue door.'), chunk.finish('stop'), chunk.usage(40, 9)]));
    const second = await boot(config, dir);
    await second.c.attach(s, { after_sequence: 0 });
    const end = await second.c.waitTurnEnd(s, 'compact-k', 20_000);
    expect(end.type).toBe('turn_complete');
    const events = second.c.events(s);
    expect(events.some((m) => m.type === 'turn_resumed')).toBe(true);
    const compacted = events.filter((m) => m.type === 'context_compacted');
    expect(compacted).toHaveLength(1);
    expect(compacted[0]).toMatchObject({ reason: 'manual', summary: 'The user asked to remember the blue door.' });
    expect(fake.requests).toHaveLength(2);
    // The summarizer saw the transcript and the instruction, after the session's system prompt.
    const body = fake.requests[1]!.body;
    expect(body.messages[0].role).toBe('system');
    expect(JSON.stringify(body.messages)).toContain('remember the blue door');
  }, 90_000);
});
