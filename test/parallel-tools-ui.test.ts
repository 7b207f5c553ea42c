/**
 * Several tool calls running at once in the frontends (docs/tools.md "Parallel tool
 * calls"): the TUI transcript and the web UI's fold keep one item per call, route each
 * call's interleaved output and its own end to it, and show the others still running.
 */
import { describe, expect, it } from 'vitest';
import type { EventMsg } from '../protocol/index.js';
import type { ToolItem } from '../src/tui/items.js';
import { layoutTranscript } from '../src/tui/layout.js';
import { applyBatches, emptyTranscript } from '../src/tui/transcript.js';
import { foldBatches } from '../web/src/fold.js';
import { batch, ev } from './helpers/tui.js';

const tags = { submission_id: 'u1', turn_id: 't1' };
const call = (n: number) => ({ call_id: `c${n}`, tool: 'shell', arguments: { command: `job ${n}` } });
const groups: EventMsg[][] = [
  [{ type: 'user_message', text: '!shells …', mode: 'turn' }, { type: 'turn_started', turn_id: 't1' }],
  [1, 2, 3].map((n) => ({ type: 'tool_call_begin', ...call(n) }) as EventMsg),
  [
    { type: 'exec_output_delta', call_id: 'c2', stream: 'stdout', chunk: 'two\n' },
    { type: 'exec_output_delta', call_id: 'c1', stream: 'stdout', chunk: 'one\n' },
    { type: 'exec_output_delta', call_id: 'c3', stream: 'stdout', chunk: 'three\n' },
  ],
  [{ type: 'tool_call_end', call_id: 'c2', status: 'ok', output: 'two\n', exit_code: 0, duration_ms: 5 }],
];
const batches = groups.map((msgs, i) => batch(i + 1, msgs.map((m) => ev(m, tags))));

describe('several running tool calls', () => {
  it('the TUI keeps one item per call: its own output, the finished one done, the others running', () => {
    const state = applyBatches(emptyTranscript('s1'), batches);
    const tools = state.items.filter((i): i is ToolItem => i.kind === 'tool');
    expect(tools.map((t) => [t.callId, t.status])).toEqual([
      ['c1', 'running'],
      ['c2', 'ok'],
      ['c3', 'running'],
    ]);
    const text = layoutTranscript(state.items, [], 80).map((l) => l.map((s) => s.text).join('')).join('\n');
    expect(text.match(/running…/g)).toHaveLength(2);
    for (const word of ['one', 'two', 'three']) expect(text).toContain(word);
  });

  it('the web UI fold keeps one item per call, each with its own output and status', () => {
    const f = foldBatches(batches);
    const tools = f.state.items.flatMap((i) => (i.kind === 'tool' ? [[i.callId, i.status, i.output]] : []));
    expect(tools).toEqual([
      ['c1', 'running', 'one\n'],
      ['c2', 'ok', 'two\n'],
      ['c3', 'running', 'three\n'],
    ]);
  });
});
