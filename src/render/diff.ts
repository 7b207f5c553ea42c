/**
 * An `edit_file` call as a diff for the terminal frontends: how each line of a unified
 * diff is shown, and the change a call proposes (from its arguments) before it has run —
 * `-` lines of old_string, `+` lines of new_string.
 */
export type DiffLineKind = 'add' | 'del' | 'hunk' | 'meta' | 'ctx';

export function diffLineKind(line: string): DiffLineKind {
  if (line.startsWith('+++') || line.startsWith('---')) return 'meta';
  if (line.startsWith('@@')) return 'hunk';
  if (line.startsWith('+')) return 'add';
  if (line.startsWith('-')) return 'del';
  return 'ctx';
}

/** The change an edit_file call proposes, as `-`/`+` lines ('' when its arguments are not an edit). */
export function editPreview(args: unknown): string {
  const a = (args ?? {}) as { path?: unknown; old_string?: unknown; new_string?: unknown; replace_all?: unknown };
  if (typeof a.old_string !== 'string' || typeof a.new_string !== 'string') return '';
  const path = typeof a.path === 'string' ? a.path : '?';
  const lines = (s: string, mark: string) => s.replace(/\n$/, '').split('\n').map((l) => mark + l);
  const all = a.replace_all === true ? ' (every occurrence)' : '';
  return [`--- a/${path}`, `+++ b/${path}${all}`, ...lines(a.old_string, '-'), ...lines(a.new_string, '+')].join('\n');
}
