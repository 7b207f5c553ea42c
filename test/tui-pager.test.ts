/**
 * The Ctrl-O pager's pure parts (pager.tsx: rows, keys, moving between calls) and the
 * plain-text transcript printed to the scrollback on detach (scrollback.ts). The whole
 * flow in a real terminal is test/tui-scrollback.test.ts.
 */
import type { Key } from 'ink';
import { describe, expect, it } from 'vitest';
import type { Item, ToolItem } from '../src/tui/items.js';
import { closedPager, pagerKey, pagerView, togglePager, type PagerKeys, type PagerState } from '../src/tui/pager.js';
import { scrollbackText } from '../src/tui/scrollback.js';
import { emptyTranscript } from '../src/tui/transcript.js';
import type { Line } from '../src/tui/text.js';

const text = (l: Line) => l.map((s) => s.text).join('');
const seq = (n: number) => Array.from({ length: n }, (_, i) => `${i + 1}\n`).join('');

function call(callId: string, command: string, output: string, truncated = 0): ToolItem {
  return {
    kind: 'tool',
    key: callId,
    seq: 1,
    callId,
    tool: 'shell',
    args: { command },
    output: output ? [{ stream: 'stdout', text: output }] : [],
    truncated,
    status: 'ok',
    exitCode: 0,
    durationMs: 5,
    approval: null,
    cwd: null,
  };
}

const noKey: Key = {
  upArrow: false, downArrow: false, leftArrow: false, rightArrow: false, pageDown: false, pageUp: false, home: false, end: false,
  return: false, escape: false, ctrl: false, shift: false, tab: false, backspace: false, delete: false, meta: false, super: false,
  hyper: false, capsLock: false, numLock: false,
};
const k = (patch: Partial<Key>): Key => ({ ...noKey, ...patch });

/** A pager over `items` of height 10, its state kept in a variable. */
function harness(items: Item[]) {
  const box = { state: closedPager as PagerState, empty: 0 };
  const keys = (): PagerKeys => ({
    state: box.state,
    setState: (s) => (box.state = s),
    items,
    width: 60,
    height: 10,
    onEmpty: () => box.empty++,
  });
  return { box, open: () => togglePager(keys()), press: (ch: string, key: Partial<Key> = {}) => pagerKey(ch, k(key), keys()) };
}

describe('Ctrl-O pager', () => {
  it('shows a header and the output from the top, padded to its height', () => {
    const rows = pagerView(call('c1', 'seq 1 40', seq(40)), 60, 10, 0).map(text);
    expect(rows).toHaveLength(10);
    expect(rows[0]).toBe(' output of $ seq 1 40 · 40 rows');
    expect(rows.slice(1)).toEqual(Array.from({ length: 9 }, (_, i) => `  │ ${i + 1}`));
    const short = pagerView(call('c2', 'true', ''), 60, 5, 3).map(text);
    expect(short).toEqual([' output of $ true · 1 row', '  (no output)', '', '', '']);
  });

  it('says how much of a huge output was not kept', () => {
    const rows = pagerView(call('c1', 'yes', 'y\n', 1234), 60, 5, 0).map(text);
    expect(rows[1]).toMatch(/… 1234 earlier characters not kept/);
    expect(rows[2]).toBe('  │ y');
  });

  it('opens on the latest call, scrolls within bounds, moves between calls and closes', () => {
    const items: Item[] = [call('c1', 'seq 1 40', seq(40)), call('c2', 'seq 1 3', seq(3))];
    const p = harness(items);
    p.open();
    expect(p.box.state).toEqual({ callId: 'c2', top: 0 });
    p.press('', { downArrow: true });
    expect(p.box.state.top).toBe(0); // 3 rows fit: nothing to scroll
    p.press('', { leftArrow: true });
    expect(p.box.state).toEqual({ callId: 'c1', top: 0 });
    p.press('', { leftArrow: true });
    expect(p.box.state.callId).toBe('c1');
    p.press('', { downArrow: true });
    p.press('j');
    expect(p.box.state.top).toBe(2);
    p.press('', { pageDown: true });
    expect(p.box.state.top).toBe(10); // a page is the 9 visible rows less one
    p.press('', { end: true });
    expect(p.box.state.top).toBe(31); // 40 rows, 9 visible
    p.press('', { pageDown: true });
    expect(p.box.state.top).toBe(31);
    p.press('', { upArrow: true });
    expect(p.box.state.top).toBe(30);
    p.press('', { home: true });
    expect(p.box.state.top).toBe(0);
    p.press('', { rightArrow: true });
    expect(p.box.state.callId).toBe('c2');
    p.press('q');
    expect(p.box.state).toEqual(closedPager);
    p.open();
    p.press('', { escape: true });
    expect(p.box.state).toEqual(closedPager);
    p.open();
    p.open(); // Ctrl-O again closes
    expect(p.box.state).toEqual(closedPager);
  });

  it('with no tool call yet, says so instead of opening', () => {
    const p = harness([]);
    p.open();
    expect(p.box.state).toEqual(closedPager);
    expect(p.box.empty).toBe(1);
  });
});

describe('scrollback text on detach', () => {
  const transcript = { ...emptyTranscript('s1'), items: [call('c1', 'echo hi', 'hi\n')] };

  it('is the transcript as laid out, plain, with the margin, ending with a newline', () => {
    const out = scrollbackText({ transcript, notes: [], showReasoning: false, nextBeforeSequence: null }, 80);
    expect(out).toBe(' ● $ echo hi\n   │ hi\n   └ exit 0 · 5ms\n\n');
    expect(out).not.toMatch(/\x1b/);
  });

  it('keeps the colours and styles as SGR codes when asked', () => {
    const out = scrollbackText({ transcript, notes: [], showReasoning: false, nextBeforeSequence: null }, 80, true);
    expect(out).toContain('\x1b[32m● \x1b[0m'); // ok glyph, green
    expect(out).toContain('\x1b[1;97mecho hi\x1b[0m'); // the command, bold whiteBright
    expect(out.replace(/\x1b\[[0-9;]*m/g, '')).toBe(' ● $ echo hi\n   │ hi\n   └ exit 0 · 5ms\n\n');
  });

  it('says when older history was not loaded, and is empty for an empty session', () => {
    const out = scrollbackText({ transcript, notes: [], showReasoning: false, nextBeforeSequence: 7 }, 80);
    expect(out.split('\n')[0]).toMatch(/earlier history not shown/);
    expect(scrollbackText({ transcript: emptyTranscript('s1'), notes: [], showReasoning: false, nextBeforeSequence: null }, 80)).toBe('');
  });
});
