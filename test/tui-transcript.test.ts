/**
 * The pure parts of the TUI: the transcript reducer (every event kind, dedupe by
 * sequence, history pages merged in front), the layout (items → rows), text wrapping
 * and sanitising, and the input editor.
 */
import { describe, expect, it } from 'vitest';
import type { BatchFrame, Event } from '../protocol/index.js';
import { parseCommand, suggest } from '../src/tui/commands.js';
import { commit, editInput, emptyInput, type InputState, type KeyInfo } from '../src/tui/input.js';
import { layoutItem, layoutTranscript } from '../src/tui/layout.js';
import { formatDuration } from '../src/render/format.js';
import { sanitize } from '../src/render/sanitize.js';
import { MAX_TOOL_OUTPUT_CHARS, type ToolItem } from '../src/tui/items.js';
import { sessionInfoStatus } from '../src/tui/session-info.js';
import { lineWidth, wrap, seg, truncateLine, type Line } from '../src/tui/text.js';
import { applyBatch, applyBatches, emptyTranscript, withDescriptor, type TranscriptState } from '../src/tui/transcript.js';
import { batch, descriptor, echoTurn, ev } from './helpers/tui.js';

const text = (l: Line) => l.map((s) => s.text).join('');
const rows = (s: TranscriptState, width = 80) => layoutTranscript(s.items, [], width).map(text);

function fold(groups: Event[][], from = 1): BatchFrame[] {
  return groups.map((events, i) => batch(from + i, events));
}

const shellTurn = (t = 't2', sub = 'u2'): Event[][] => {
  const tags = { submission_id: sub, turn_id: t };
  const args = { command: 'echo hi' };
  return [
    [ev({ type: 'user_message', text: '!sh echo hi', mode: 'turn' }, { submission_id: sub }), ev({ type: 'turn_started', turn_id: t }, tags)],
    [ev({ type: 'tool_call_begin', call_id: 'c1', tool: 'shell', arguments: args }, tags)],
    [ev({ type: 'exec_approval_request', approval_id: 'a1', call_id: 'c1', tool: 'shell', arguments: args, cwd: '/work' }, tags)],
    [ev({ type: 'approval_resolved', approval_id: 'a1', decision: 'approve' }, tags)],
    [ev({ type: 'exec_output_delta', call_id: 'c1', stream: 'stdout', chunk: 'hi\n' }, tags)],
    [ev({ type: 'exec_output_delta', call_id: 'c1', stream: 'stderr', chunk: 'warn\n' }, tags)],
    [ev({ type: 'tool_call_end', call_id: 'c1', status: 'ok', output: 'hi\nwarn\n', exit_code: 0, duration_ms: 12 }, tags)],
    [ev({ type: 'agent_message', text: 'command exited with code 0' }, tags)],
    [
      ev(
        {
          type: 'turn_complete',
          last_message: 'command exited with code 0',
          model_calls: 2,
          tool_calls: 1,
          failed_tool_calls: 0,
          usage: { input_tokens: 10, output_tokens: 5 },
          duration_ms: 1500,
        },
        tags,
      ),
    ],
  ];
};

describe('transcript reducer', () => {
  it('turns a simple turn into user, streamed agent and turn-end items, tracking status', () => {
    const batches = fold(echoTurn('hello'));
    let s = emptyTranscript('s1');
    s = applyBatch(s, batches[0]!);
    expect(sessionInfoStatus(s.info)).toBe('running');
    expect(s.info.activeTurnId).toBe('t1');
    s = applyBatch(s, batches[1]!);
    s = applyBatch(s, batches[2]!);
    expect(s.items.at(-1)).toMatchObject({ kind: 'agent', text: 'echo: hello', streaming: true });
    s = applyBatch(s, batches[3]!);
    expect(s.items.map((i) => i.kind)).toEqual(['user', 'agent', 'turn_end']);
    expect(s.items[1]).toMatchObject({ text: 'echo: hello', streaming: false });
    expect(sessionInfoStatus(s.info)).toBe('idle');
    expect(s.info.usage).toEqual({ input_tokens: 3, output_tokens: 4 });
    expect(rows(s)).toEqual(['› hello', '', '● echo: hello', '', expect.stringMatching(/^── done in 12ms · 7 tokens ─+$/)]);
  });

  it('ignores duplicate batches (same sequence twice, in one call or across calls)', () => {
    const batches = fold(echoTurn('x'));
    const once = applyBatches(emptyTranscript(), batches);
    const twice = applyBatches(applyBatches(once, batches), [batches[1]!, batches[1]!]);
    expect(twice).toBe(once);
    expect(rows(twice)).toEqual(rows(once));
  });

  it('merges an older history page in front and keeps the newer live status', () => {
    const all = fold([...echoTurn('one'), ...shellTurn('t2', 'u2').slice(0, 3)]);
    const whole = applyBatches(emptyTranscript(), all);
    let s = applyBatches(emptyTranscript(), all.slice(5));
    expect(s.info.pendingApproval?.approval_id).toBe('a1');
    const prepends = s.prepends;
    s = applyBatches(s, all.slice(0, 5));
    expect(s.prepends).toBe(prepends + 1);
    expect(s.firstSeq).toBe(1);
    expect(rows(s)).toEqual(rows(whole));
    expect(s.info.pendingApproval?.approval_id).toBe('a1');
    expect(sessionInfoStatus(s.info)).toBe('awaiting_approval');
  });

  it('renders a tool call with approval, streamed stdout/stderr and its result', () => {
    const s = applyBatches(emptyTranscript(), fold(shellTurn()));
    const tool = s.items.find((i) => i.kind === 'tool') as ToolItem;
    expect(tool).toMatchObject({ status: 'ok', exitCode: 0, approval: 'approve', durationMs: 12 });
    expect(tool.output).toEqual([
      { stream: 'stdout', text: 'hi\n' },
      { stream: 'stderr', text: 'warn\n' },
    ]);
    const r = rows(s);
    expect(r).toContain('● $ echo hi');
    expect(r).toContain('  │ hi');
    expect(r).toContain('  │ warn');
    expect(r).toContain('  └ exit 0 · 12ms · approved');
    expect(r).toContain('● command exited with code 0');
    expect(r.at(-1)).toMatch(/^── done in 1\.5s · 1 tool call · 15 tokens/);
  });

  it('shows a pending approval on its tool and clears it when resolved', () => {
    const groups = shellTurn();
    let s = applyBatches(emptyTranscript(), fold(groups.slice(0, 3)));
    expect(s.info.pendingApproval).toMatchObject({ approval_id: 'a1', cwd: '/work' });
    expect(rows(s)).toContain('  └ waiting for approval · in /work');
    s = applyBatch(s, batch(4, groups[3]!));
    expect(s.info.pendingApproval).toBeNull();
    expect((s.items.find((i) => i.kind === 'tool') as ToolItem).status).toBe('running');
    expect(rows(s)).toContain('  └ running… · approved');
  });

  it('uses the tool_call_end output when nothing was streamed, and denied/interrupted states', () => {
    const tags = { submission_id: 'u', turn_id: 't' };
    const s = applyBatches(
      emptyTranscript(),
      fold([
        [ev({ type: 'turn_started', turn_id: 't' }, tags)],
        [ev({ type: 'tool_call_begin', call_id: 'r', tool: 'read_file', arguments: { path: 'a.txt' } }, tags)],
        [ev({ type: 'tool_call_end', call_id: 'r', status: 'ok', output: 'file body', duration_ms: 1 }, tags)],
        [ev({ type: 'tool_call_begin', call_id: 'd', tool: 'shell', arguments: { command: 'rm -rf /' } }, tags)],
        [ev({ type: 'tool_call_end', call_id: 'd', status: 'denied', output: 'denied by user', duration_ms: 0 }, tags)],
        [ev({ type: 'tool_call_begin', call_id: 'i', tool: 'shell', arguments: { command: 'sleep 9' } }, tags)],
        [ev({ type: 'turn_interrupted', reason: 'interrupted' }, tags)],
      ]),
    );
    const r = rows(s);
    expect(r).toContain('● read_file a.txt');
    expect(r).toContain('  │ file body');
    expect(r).toContain('⊘ $ rm -rf /');
    expect(r).toContain('  └ denied');
    expect(r).toContain('■ $ sleep 9');
    expect(r).toContain('  └ interrupted');
    expect(r.at(-1)).toMatch(/^── interrupted ─+$/);
    expect(sessionInfoStatus(s.info)).toBe('idle');
  });

  it('renders failures, warnings, model changes, resumes, capability output and queued messages', () => {
    const tags = { submission_id: 'u', turn_id: 't' };
    const s = applyBatches(
      emptyTranscript(),
      fold([
        [
          ev({
            type: 'session_configured',
            session_id: 's1',
            model: { route: 'scripted', model: 'scripted', reasoning_effort: null, context_window: null },
            cwd: '/w',
            approval_policy: 'ask',
            title: null,
          }),
        ],
        [ev({ type: 'user_message', text: 'later', mode: 'queued' }, { submission_id: 'q' })],
        [ev({ type: 'turn_started', turn_id: 't' }, tags), ev({ type: 'turn_resumed', attempt: 2 }, tags)],
        [ev({ type: 'turn_failed', error: { code: 'model_error', message: 'boom' } }, tags)],
        [ev({ type: 'warning', message: 'no active turn to interrupt' })],
        [ev({ type: 'model_changed', route: 'local', model: 'llama3.1', reasoning_effort: 'high', context_window: 128000 })],
        [ev({ type: 'capability_output', capability: 'git', command: 'status', output: { clean: true } })],
        [ev({ type: 'session_resume_requested', session_id: 's0', context: {} })],
      ]),
    );
    const r = rows(s);
    expect(r).toEqual([
      '◇ session s1',
      '  scripted · /w · approvals: ask',
      '',
      '› later  (queued)',
      '',
      '⚠ turn resumed after a daemon restart or takeover (attempt 2)',
      '',
      expect.stringMatching(/^── turn failed — model_error: boom ─+$/),
      '',
      '⚠ no active turn to interrupt',
      '',
      '◇ model → local',
      '  llama3.1 · effort high',
      '',
      '◇ git status',
      '  {',
      '    "clean": true',
      '  }',
      '',
      '◇ resume requested from session s0',
    ]);
    expect(s.info.model?.route).toBe('local');
  });

  it('shows an event type it does not know as a notice naming it, even one named like an Object method', () => {
    const s = applyBatches(emptyTranscript(), fold([[ev({ type: 'future_event' } as never)], [ev({ type: 'toString' } as never)]]));
    expect(s.items.map((i) => (i.kind === 'notice' ? i.text : i.kind))).toEqual(['event future_event', 'event toString']);
  });

  it('keeps a reply cut off by a restart and starts a new one after turn_resumed', () => {
    const tags = { submission_id: 'u', turn_id: 't' };
    const s = applyBatches(
      emptyTranscript(),
      fold([
        [ev({ type: 'turn_started', turn_id: 't' }, tags), ev({ type: 'agent_message_delta', delta: 'sl' }, tags)],
        [ev({ type: 'turn_resumed', attempt: 1 }, tags)],
        [ev({ type: 'agent_message_delta', delta: 'slept' }, tags)],
        [ev({ type: 'agent_message', text: 'slept' }, tags)],
      ]),
    );
    expect(rows(s)).toEqual(['● sl', '', '⚠ turn resumed after a daemon restart or takeover (attempt 1)', '', '● slept']);
    expect(sessionInfoStatus(s.info)).toBe('running');
  });

  it('takes the pending approval and running turn from the attach descriptor', () => {
    const req = { type: 'exec_approval_request' as const, approval_id: 'a9', call_id: 'c9', tool: 'shell', arguments: { command: 'make' }, cwd: '/p' };
    const s = withDescriptor(emptyTranscript(), descriptor({ status: 'awaiting_approval', active_turn_id: 't9', pending_approval: req }));
    expect(s.info.pendingApproval).toEqual(req);
    expect(sessionInfoStatus(s.info)).toBe('awaiting_approval');
  });

  it('keeps only the tail of a huge tool output', () => {
    const tags = { submission_id: 'u', turn_id: 't' };
    const chunk = 'x'.repeat(10_000) + '\n';
    const groups: Event[][] = [[ev({ type: 'tool_call_begin', call_id: 'c', tool: 'shell', arguments: { command: 'yes' } }, tags)]];
    for (let i = 0; i < 10; i++) groups.push([ev({ type: 'exec_output_delta', call_id: 'c', stream: 'stdout', chunk }, tags)]);
    const s = applyBatches(emptyTranscript(), fold(groups));
    const tool = s.items[0] as ToolItem;
    const kept = tool.output.reduce((n, c) => n + c.text.length, 0);
    expect(kept).toBe(MAX_TOOL_OUTPUT_CHARS);
    expect(tool.truncated).toBe(10 * chunk.length - MAX_TOOL_OUTPUT_CHARS);
    const r = layoutItem(tool, 80).map(text);
    expect(r[1]).toMatch(/^ {2}│ … \d+ more lines above · ctrl-o to see all$/);
    expect(r.length).toBeLessThanOrEqual(1 + 1 + 12 + 1);
  });

  it('memoises layout per item and width', () => {
    const s = applyBatches(emptyTranscript(), fold(echoTurn('m')));
    const item = s.items[0]!;
    expect(layoutItem(item, 40)).toBe(layoutItem(item, 40));
    expect(layoutItem(item, 41)).not.toBe(layoutItem(item, 40));
  });

  it('places local notes after the items of their sequence', () => {
    const s = applyBatches(emptyTranscript(), fold(echoTurn('n')));
    const r = layoutTranscript(s.items, [{ key: 'k', afterSeq: 1, tone: 'error', text: 'oops' }], 80).map(text);
    expect(r.slice(0, 3)).toEqual(['› n', '', '✗ oops']);
  });
});

describe('text', () => {
  it('wraps words with prefixes and splits long words', () => {
    const lines = wrap([seg('the quick brown fox jumps')], 12, { first: [seg('› ')], rest: [seg('  ')] }).map(text);
    expect(lines).toEqual(['› the quick', '  brown fox', '  jumps']);
    expect(wrap([seg('abcdefghij')], 4).map(text)).toEqual(['abcd', 'efgh', 'ij']);
    expect(wrap([seg('a\n\nb')], 10).map(text)).toEqual(['a', '', 'b']);
  });

  it('measures wide characters and truncates', () => {
    expect(lineWidth([seg('abc')])).toBe(3);
    expect(lineWidth([seg('日本')])).toBe(4);
    expect(lineWidth([seg('e\u0301')])).toBe(1);
    expect(text(truncateLine([seg('hello world')], 6))).toBe('hello…');
  });

  it('sanitises escape sequences, control characters, carriage returns and tabs', () => {
    expect(sanitize('\x1b[31mred\x1b[0m')).toBe('red');
    expect(sanitize('a\x07b\x1b]0;title\x07c')).toBe('abc');
    expect(sanitize('10%\r50%\r100%\ndone')).toBe('100%\ndone');
    expect(sanitize('a\tb')).toBe('a   b');
    expect(sanitize('x\r\ny')).toBe('x\ny');
  });

  it('formats durations', () => {
    expect(formatDuration(850)).toBe('850ms');
    expect(formatDuration(3200)).toBe('3.2s');
    expect(formatDuration(65_000)).toBe('1m05s');
  });
});

describe('input editor', () => {
  const type = (s: InputState, t: string) => editInput(s, t, {}).state;
  const key = (s: InputState, k: KeyInfo, input = '') => editInput(s, input, k);

  it('inserts, moves and deletes', () => {
    let s = type(emptyInput(), 'helo');
    s = key(s, { leftArrow: true }).state;
    s = type(s, 'l');
    expect(s).toMatchObject({ value: 'hello', cursor: 4 });
    s = key(s, { backspace: true }).state;
    expect(s.value).toBe('helo');
    s = key(s, { ctrl: true }, 'a').state;
    expect(s.cursor).toBe(0);
    s = key(s, { ctrl: true }, 'k').state;
    expect(s.value).toBe('');
    s = type(s, 'one two three');
    s = key(s, { ctrl: true }, 'w').state;
    expect(s.value).toBe('one two ');
    s = key(s, { ctrl: true }, 'u').state;
    expect(s.value).toBe('');
  });

  it('submits on Enter; Alt-Enter and a trailing backslash insert newlines', () => {
    let s = type(emptyInput(), 'line1\\');
    let r = key(s, { return: true });
    expect(r.submit).toBeUndefined();
    s = type(r.state, 'line2');
    s = key(s, { return: true, meta: true }).state;
    s = type(s, 'line3');
    r = key(s, { return: true });
    expect(r.submit).toBe('line1\nline2\nline3');
  });

  it('treats a typed chunk ending in CR as text + Enter, but not inside a bracketed paste', () => {
    const r = editInput(emptyInput(), 'hello\r', {});
    expect(r.submit).toBe('hello');
    const p = editInput(emptyInput(), 'a\rb\r', {}, true);
    expect(p.submit).toBeUndefined();
    expect(p.state.value).toBe('a\nb\n');
  });

  it('browses history with Up/Down, restoring the draft', () => {
    let s = commit(commit(emptyInput(), 'first'), 'second');
    s = type(s, 'draft');
    s = key(s, { upArrow: true }).state;
    expect(s.value).toBe('second');
    s = key(s, { upArrow: true }).state;
    expect(s.value).toBe('first');
    s = key(s, { downArrow: true }).state;
    s = key(s, { downArrow: true }).state;
    expect(s.value).toBe('draft');
  });

  it('leaves Esc, Tab and paging keys to the app', () => {
    expect(key(emptyInput(), { escape: true }).handled).toBe(false);
    expect(key(emptyInput(), { pageUp: true }).handled).toBe(false);
  });
});

describe('slash commands', () => {
  it('parses commands and aliases, and suggests completions', () => {
    expect(parseCommand('/model local high')).toEqual({ name: 'model', args: ['local', 'high'], rest: 'local high' });
    expect(parseCommand('/exit')?.name).toBe('quit');
    expect(parseCommand('hello')).toBeNull();
    expect(parseCommand('//not a command')).toBeNull();
    expect(suggest('/se').map((c) => c.name)).toEqual(['sessions']);
    expect(suggest('/model x')).toEqual([]);
  });
});
