/** The terminal UI lays out an edit_file call as a coloured diff: the proposal while it awaits approval, the result's diff after. */
import { expect, test } from 'vitest';
import { layoutItem } from '../src/tui/layout.js';
import type { ToolItem } from '../src/tui/items.js';
import { theme } from '../src/tui/theme.js';
import { editPreview } from '../src/render/diff.js';

function item(over: Partial<ToolItem>): ToolItem {
  return {
    kind: 'tool', key: 'k', seq: 1, callId: 'c1', tool: 'edit_file',
    args: { path: 'a.txt', old_string: 'three', new_string: 'THREE' },
    output: [], truncated: 0, status: 'awaiting_approval', exitCode: null, durationMs: null, approval: 'pending', cwd: '/w',
    ...over,
  };
}

const rows = (it: ToolItem) => layoutItem(it, 80).map((l) => ({ text: l.map((s) => s.text).join(''), color: l[l.length - 1]?.color }));

test('awaiting approval: the proposed change, removed lines red and added green', () => {
  const r = rows(item({}));
  expect(r.find((x) => x.text.endsWith('-three'))?.color).toBe(theme.error);
  expect(r.find((x) => x.text.endsWith('+THREE'))?.color).toBe(theme.success);
  expect(editPreview({ path: 'p', old_string: 'a\nb\n', new_string: 'c', replace_all: true })).toBe('--- a/p\n+++ b/p (every occurrence)\n-a\n-b\n+c');
});

test('after it ran: the unified diff of the result', () => {
  const out = 'edited a.txt: 1 replacement\n--- a/a.txt\n+++ b/a.txt\n@@ -1,3 +1,3 @@\n one\n-three\n+THREE\n';
  const r = rows(item({ status: 'ok', approval: 'approve', output: [{ stream: 'stdout', text: out }] }));
  expect(r.find((x) => x.text.endsWith('@@ -1,3 +1,3 @@'))?.color).toBe(theme.code);
  expect(r.find((x) => x.text.endsWith('-three'))?.color).toBe(theme.error);
  expect(r.find((x) => x.text.endsWith('+THREE'))?.color).toBe(theme.success);
  expect(r.find((x) => x.text.endsWith(' one'))?.color).toBe(theme.output);
});
