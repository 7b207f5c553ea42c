/**
 * The model's view of a transcript (src/session/context.ts): compaction markers, the plan
 * that never separates a tool call from its result, the 64 KiB cut of tool output, the
 * scripted model's deterministic summary and token counts, and the config blocks.
 */
import fc from 'fast-check';
import { describe, expect, test } from 'vitest';
import { parseConfig } from '../src/config/config.js';
import { requestTokens, scriptedModel } from '../src/model/scripted.js';
import type { ModelChunk, ModelRequest } from '../src/model/types.js';
import { cutToolOutput, itemTokens, modelView, planCompaction, SUMMARY_PREFIX, summarizationContext, type TranscriptItem } from '../src/session/context.js';
import { msg, openTestHost, Watcher } from './helpers/session.js';

const user = (text: string): TranscriptItem => ({ role: 'user', text });
const callItem = (id: string): TranscriptItem => ({ role: 'assistant', text: '', tool_calls: [{ call_id: id, tool: 'shell', arguments: { command: 'ls' } }] });
const result = (id: string, output: string): TranscriptItem => ({ role: 'tool', call_id: id, tool: 'shell', output, exit_code: 0 });

describe('model view and compaction plan', () => {
  test('a marker replaces what it summarized; what it kept and what came after stay', () => {
    const items: TranscriptItem[] = [user('a'), user('b'), user('c'), { role: 'compaction', summary: 'S', keep_from: 2 }, user('d')];
    expect(modelView(items).map((v) => [v.index, v.item])).toEqual([
      [3, { role: 'system', text: `${SUMMARY_PREFIX}S` }],
      [2, { role: 'user', text: 'c' }],
      [4, { role: 'user', text: 'd' }],
    ]);
  });

  test('the kept part never starts with a tool result: the call and its results are summarized together', () => {
    const big = 'x'.repeat(400);
    const items = [user('one'), callItem('c1'), result('c1', big), result('c1b', big), { role: 'assistant', text: 'done' } as TranscriptItem];
    // Budget for the last two items only: the split would fall between a call and its results.
    const budget = itemTokens(items[3]!) + itemTokens(items[4]!);
    const plan = planCompaction(items, 'auto', budget)!;
    expect(plan.keep_from).toBe(4);
    expect(plan.older.map((i) => i.role)).toEqual(['user', 'assistant', 'tool', 'tool']);
    expect(plan.items_after).toBe(2);
    // Manual keeps nothing.
    const manual = planCompaction(items, 'manual', 1e9)!;
    expect(manual).toMatchObject({ keep_from: 5, items_after: 1, items_before: 5 });
    // Everything fits: nothing to summarize.
    expect(planCompaction(items, 'auto', 1e9)).toBeNull();
  });

  test('tool output over 64 KiB: head, a marker naming the cut, tail; multi-byte characters are not split', () => {
    expect(cutToolOutput('small')).toBe('small');
    const out = 'H' + 'é'.repeat(50_000) + 'T';
    const cut = cutToolOutput(out);
    expect(Buffer.byteLength(cut)).toBeLessThanOrEqual(64 * 1024);
    expect(cut.startsWith('Hé')).toBe(true);
    expect(cut.endsWith('éT')).toBe(true);
    expect(cut).not.toContain('\uFFFD');
    const [, n] = /\[… (\d+) bytes of output cut here: 100002 bytes in all …\]/.exec(cut)!;
    expect(Buffer.byteLength(cut) - Buffer.byteLength(cut.match(/\n\[…[^\]]*\]\n/)![0]) + Number(n)).toBe(100_002);
  });
});

describe('scripted model', () => {
  const route = { route: 'small', provider: 'scripted' as const, model: 'scripted', context_window: null };
  async function run(request: Omit<ModelRequest, 'signal'>): Promise<ModelChunk[]> {
    const out: ModelChunk[] = [];
    for await (const c of scriptedModel.stream({ ...request, signal: new AbortController().signal })) out.push(c);
    return out;
  }

  test('summarizes deterministically and counts the whole request / 4', async () => {
    const context = summarizationContext([
      { role: 'user', text: 'please refactor the parser module' },
      { role: 'assistant', text: 'ok' },
      { role: 'user', text: 'short' },
    ]);
    const request = { route, reasoning_effort: null, system: 'sys', context, tools: [] };
    const chunks = await run(request);
    const text = chunks.flatMap((c) => (c.type === 'text_delta' ? [c.delta] : [])).join('');
    expect(text).toBe('summary: please refactor the  | short'); // exactly 20 characters: "please refactor the "
    const usage = chunks.find((c) => c.type === 'usage')!;
    expect(usage).toMatchObject({
      input_tokens: Math.ceil(Buffer.byteLength(JSON.stringify({ system: 'sys', context, tools: [] })) / 4),
      output_tokens: Math.ceil(text.length / 4),
    });
  });

  test('the count summed from the request\'s parts equals the whole request\'s JSON bytes / 4, call after call', () => {
    const text = fc.string({ unit: 'binary', maxLength: 40 });
    const item = fc.oneof(
      fc.record({ role: fc.constant('user' as const), text }),
      fc.record({ role: fc.constant('assistant' as const), text, tool_calls: fc.array(fc.record({ call_id: text, tool: text, arguments: fc.dictionary(text, fc.jsonValue()) }), { maxLength: 2 }) }),
      fc.record({ role: fc.constant('tool' as const), call_id: text, tool: text, output: text, exit_code: fc.option(fc.integer(), { nil: undefined }) }),
    );
    const tool = fc.record({ name: text, description: text, parameters: fc.dictionary(text, fc.jsonValue()) });
    const whole = (r: Pick<ModelRequest, 'system' | 'context' | 'tools'>) =>
      Math.ceil(Buffer.byteLength(JSON.stringify({ system: r.system ?? null, context: r.context, tools: r.tools })) / 4);
    fc.assert(
      fc.property(fc.option(text, { nil: undefined }), fc.array(item, { maxLength: 8 }), fc.array(item, { maxLength: 4 }), fc.array(tool, { maxLength: 3 }), (system, first, added, tools) => {
        // A session's calls: the same item objects again, with more after them.
        const one = { system, context: first as ModelRequest['context'], tools: tools as ModelRequest['tools'] };
        const two = { system, context: [...first, ...added] as ModelRequest['context'], tools: [...tools] as ModelRequest['tools'] };
        expect(requestTokens(one)).toBe(whole(one));
        expect(requestTokens(two)).toBe(whole(two));
        // Equal content in new objects counts the same.
        const copy = structuredClone(two);
        expect(requestTokens(copy)).toBe(whole(copy));
      }),
      { numRuns: 300 },
    );
  });

  test('a request larger than the route\'s context_window fails context_overflow', async () => {
    const request = { route: { ...route, context_window: 10 }, reasoning_effort: null, context: [{ role: 'user' as const, text: 'x'.repeat(100) }], tools: [] };
    await expect(run(request)).rejects.toMatchObject({ code: 'context_overflow' });
  });
});

describe('configuration', () => {
  test('compaction block defaults and bounds; route and top-level system prompts', () => {
    expect(parseConfig({}).compaction).toEqual({ threshold: 0.8, keep_recent_tokens: 20000, max_failures: 2 });
    expect(() => parseConfig({ compaction: { threshold: 1.5 } })).toThrow(/compaction\.threshold/);
    expect(() => parseConfig({ compaction: { route: 'nope' } })).toThrow(/compaction\.route: no route named "nope"/);
    expect(() => parseConfig({ compaction: { max_failures: 0 } })).toThrow(/compaction\.max_failures/);
    expect(parseConfig({ system_prompt: 'Be kind.' }).system_prompt).toBe('Be kind.');
    expect(() => parseConfig({ system_prompt: { file: 'no-such-file.txt' } }, 'cfg', '/nonexistent')).toThrow(/system_prompt\.file: cannot read/);
    expect(() => parseConfig({ system_prompt: 'x'.repeat(64 * 1024 + 1) })).toThrow(/system_prompt: at most 65536 bytes/);
    expect(() => parseConfig({ models: { routes: { r: { provider: 'scripted', system_prompt: 'x'.repeat(70_000) } } } })).toThrow(/models\.routes\.r\.system_prompt/);
  });
});

describe('checkpoints written before context accounting', () => {
  test('hydrate with no system prompt of their own and an estimate rebuilt from the transcript', async () => {
    const h = await openTestHost({ approval_policy: 'auto' });
    const d = await h.host.create({ cwd: h.dir });
    const s = (await h.host.open(d.session_id))!;
    const w = new Watcher(s);
    s.submit(msg('an old conversation'));
    await w.next('turn_complete');
    await h.close();
    // Strip the new fields, as an older daemon wrote the checkpoint.
    const Database = (await import('better-sqlite3')).default;
    const db = new Database(`${h.dir}/agentd.db`);
    const row = db.prepare('SELECT checkpoint FROM sessions WHERE session_id = ?').get(d.session_id) as { checkpoint: string };
    const old = JSON.parse(row.checkpoint);
    delete old.context;
    delete old.system_prompt;
    db.prepare('UPDATE sessions SET checkpoint = ? WHERE session_id = ?').run(JSON.stringify(old), d.session_id);
    db.close();
    const host = await h.reopen();
    const again = (await host.open(d.session_id))!;
    expect(again.state.system_prompt).toBeNull();
    expect(again.state.context.items).toBe(2);
    const items = host.journal.loadTranscript(d.session_id).map((t) => JSON.parse(t) as TranscriptItem);
    expect(again.descriptor().context.estimated_tokens).toBe(items.reduce((n, i) => n + itemTokens(i), 0));
    const w2 = new Watcher(again);
    again.submit(msg('and a new message'));
    expect(await w2.next('turn_complete')).toMatchObject({ last_message: 'echo: and a new message' });
  });
});
