/**
 * The TUI's view of what the model sees: thinking folded into a dimmed item that
 * collapses once the reply starts (and `/thinking` shows it whole), a compaction marker
 * line with tokens before → after, and the context gauge (`41k / 128k`) from the
 * descriptor, token_usage and context_compacted; `/compact` and `/model` in the commands,
 * and through a real daemon (the controller on the real client library).
 */
import { describe, expect, it } from 'vitest';
import { AgentdClient } from '../src/client/client.js';
import { COMMANDS, parseCommand } from '../src/tui/commands.js';
import { TuiController } from '../src/tui/controller.js';
import { layoutTranscript } from '../src/tui/layout.js';
import { runSlashCommand } from '../src/tui/slash-commands.js';
import { contextGauge } from '../src/tui/status-line.js';
import type { Line } from '../src/tui/text.js';
import { applyBatches, emptyTranscript, withDescriptor } from '../src/tui/transcript.js';
import { daemonPool } from './helpers/pool.js';
import { batch, descriptor, ev } from './helpers/tui.js';

const text = (l: Line) => l.map((s) => s.text).join('');
const tags = { submission_id: 'u1', turn_id: 't1' };

describe('thinking, compaction and the gauge in the TUI', () => {
  const model = { route: 'big', model: 'm', reasoning_effort: null, context_window: 128_000 };
  const start = withDescriptor(emptyTranscript('s1'), { ...descriptor({ model }), context: { estimated_tokens: 41_000, context_window: 128_000 } });

  it('the gauge starts from the descriptor, follows token_usage and a compaction', () => {
    expect(contextGauge(start.info)).toBe('41k / 128k');
    const usage = { input_tokens: 50_000, output_tokens: 2_000, cached_input_tokens: 0, reasoning_tokens: 0 };
    let s = applyBatches(start, [batch(1, [ev({ type: 'token_usage', usage, total: usage }, tags)])]);
    expect(contextGauge(s.info)).toBe('52k / 128k');
    s = applyBatches(s, [batch(2, [ev({ type: 'context_compacted', reason: 'auto', items_before: 40, items_after: 6, tokens_before: 104_000, tokens_after: 9_500, summary: 'summary: a | b' }, tags)])]);
    expect(contextGauge(s.info)).toBe('9.5k / 128k');
    const rows = layoutTranscript(s.items, [], 100).map(text);
    expect(rows).toContain('◇ ── context compacted (auto): 104k → 9.5k tokens · 40 → 6 items');
    expect(rows).toContain('  summary: a | b');
    // Without a window there is nothing to show it against (and the status line stays short).
    expect(contextGauge(withDescriptor(emptyTranscript('s2'), { ...descriptor(), context: { estimated_tokens: 800, context_window: null } }).info)).toBeNull();
  });

  it('thinking is shown dimmed while it streams, collapsed to one row once the reply starts, whole with /thinking', () => {
    const thinking = 'first thought\nsecond thought\nthird thought';
    let s = applyBatches(start, [batch(1, [ev({ type: 'agent_reasoning_delta', delta: 'first thought\nsecond' }, tags), ev({ type: 'agent_reasoning_delta', delta: ' thought\nthird thought' }, tags)])]);
    expect(s.items).toHaveLength(1);
    expect(s.items[0]).toMatchObject({ kind: 'reasoning', text: thinking, streaming: true });
    const streaming = layoutTranscript(s.items, [], 80);
    expect(streaming.map(text)).toEqual(['✻ first thought', '  second thought', '  third thought']);
    expect(streaming[0]![1]).toMatchObject({ dim: true });
    s = applyBatches(s, [batch(2, [ev({ type: 'agent_message_delta', delta: 'The answer' }, tags)])]);
    expect(s.items[0]).toMatchObject({ kind: 'reasoning', streaming: false });
    expect(layoutTranscript(s.items, [], 80).map(text)).toEqual(['✻ first thought', '  … 2 more lines of thinking · /thinking to show', '', '● The answer ▍']);
    expect(layoutTranscript(s.items, [], 80, true).map(text).slice(0, 3)).toEqual(['✻ first thought', '  second thought', '  third thought']);
  });

  it('/compact and /thinking are commands; /model takes an optional route', () => {
    expect(COMMANDS.map((c) => c.name)).toEqual(expect.arrayContaining(['compact', 'thinking', 'model']));
    expect(parseCommand('/compact')).toEqual({ name: 'compact', args: [], rest: '' });
    expect(COMMANDS.find((c) => c.name === 'model')!.args).toBe('[ROUTE [EFFORT]]');
  });
});

// ---- the controller against a real daemon ----

const pool = daemonPool();

describe('TUI commands through a real daemon', () => {
  it('/model alone lists the routes with window and efforts; /compact compacts; the gauge follows', async () => {
    const { d, c } = await pool.boot({
      approval_policy: 'auto',
      models: { default: 'small', routes: { small: { provider: 'scripted', context_window: 64_000 }, big: { provider: 'scripted', context_window: 128_000, reasoning_efforts: ['low', 'high'] } } },
    });
    const s = (await c.createSession({ approval_policy: 'auto' })).session_id as string;
    const client = new AgentdClient({ url: d.wsUrl, token: d.token ?? undefined });
    await client.start();
    pool.track({ close: async () => client.close() });
    const controller = new TuiController(client);
    await controller.open(s);
    const wait = async (pred: () => boolean, what: string) => {
      for (let i = 0; i < 500 && !pred(); i++) await new Promise((r) => setTimeout(r, 10));
      if (!pred()) throw new Error(`timed out waiting for ${what}`);
    };
    const run = (text: string) => runSlashCommand(parseCommand(text)!, controller, () => {});

    run('/model');
    await wait(() => controller.getState().notes.some((n) => n.text.includes('model routes')), 'the routes note');
    const note = controller.getState().notes.find((n) => n.text.includes('model routes'))!;
    expect(note.text).toBe('3 model routes — /model ROUTE [EFFORT] to switch');
    const rows = note.detail!.split('\n');
    expect(rows.find((r) => r.includes(' small '))).toMatch(/^\* small\s+scripted\/small\s+64k ctx\s+\(default\)$/);
    expect(rows.find((r) => r.includes(' big '))).toMatch(/^ {2}big\s+scripted\/big\s+128k ctx\s+efforts: low, high$/);
    expect(contextGauge(controller.getState().transcript.info)).toMatch(/ \/ 64k$/);

    expect(await controller.sendMessage(`please remember ${'this long detail '.repeat(30)}`)).toBe(true);
    await wait(() => controller.getState().transcript.items.some((i) => i.kind === 'turn_end'), 'the first turn');
    const before = controller.getState().transcript.info.context!.estimated;
    run('/compact');
    await wait(() => controller.getState().transcript.items.some((i) => i.kind === 'notice' && i.text.includes('context compacted (manual)')), 'the compaction marker');
    expect(controller.getState().transcript.info.context!.estimated).toBeLessThan(before);
  }, 60_000);
});
