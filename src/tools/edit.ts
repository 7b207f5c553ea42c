/**
 * The `edit_file {path, old_string, new_string, replace_all?}` tool: an exact-text
 * replacement in an existing file, confined and approved like `write_file`. Its result
 * carries a unified diff of the change (docs/tools.md). Every refusal is an error result
 * whose output starts with a stable code: `edit_missing_file`, `edit_not_found`,
 * `edit_ambiguous`, `edit_no_change`, `edit_invalid_arguments`, `edit_not_text`.
 */
import { closeSync, constants, fstatSync, openSync, readFileSync, writeSync, ftruncateSync } from 'node:fs';
import { createTwoFilesPatch } from 'diff';
import type { Tool, ToolResult } from './types.js';
import type { Protected } from './confine.js';
import { confine, error, pathParam, withOpened } from './files.js';

/** Most bytes of a file `edit_file` edits. */
export const EDIT_FILE_MAX_BYTES = 4 * 1024 * 1024;
/** Most bytes of the diff shown in the result (the edit itself is never cut). */
export const EDIT_DIFF_CAP_BYTES = 64 * 1024;

export type EditErrorCode =
  | 'edit_invalid_arguments'
  | 'edit_missing_file'
  | 'edit_not_text'
  | 'edit_not_found'
  | 'edit_ambiguous'
  | 'edit_no_change';

const fail = (code: EditErrorCode, text: string): ToolResult => error(`${code}: ${text}`);

/** Occurrences of `needle` in `text` (non-overlapping), stopping at `limit`. */
function count(text: string, needle: string, limit = Number.MAX_SAFE_INTEGER): number {
  let n = 0;
  for (let at = text.indexOf(needle); at !== -1 && n < limit; at = text.indexOf(needle, at + needle.length)) n++;
  return n;
}

/** A unified diff of `before` → `after` for `shown`, capped at EDIT_DIFF_CAP_BYTES. */
export function unifiedDiff(shown: string, before: string, after: string): string {
  const patch = createTwoFilesPatch(`a/${shown}`, `b/${shown}`, before, after, undefined, undefined, { context: 3 });
  // Drop the "Index:"/"====" header lines some versions emit; start at "---".
  const text = patch.slice(Math.max(patch.indexOf('--- '), 0));
  if (Buffer.byteLength(text) <= EDIT_DIFF_CAP_BYTES) return text;
  const cut = Buffer.from(text).subarray(0, EDIT_DIFF_CAP_BYTES).toString('utf8').replace(/\n[^\n]*$/, '\n');
  return `${cut}[diff truncated at ${EDIT_DIFF_CAP_BYTES / 1024} KiB]\n`;
}

export function createEditTool(guard: Protected | undefined): Tool {
  return {
    spec: {
      name: 'edit_file',
      description:
        'Replace exact text in an existing file inside the working directory. old_string must occur exactly once ' +
        '(include surrounding lines to make it unique) unless replace_all is true. Answers a unified diff of the change.',
      parameters: {
        type: 'object',
        properties: {
          path: pathParam,
          old_string: { type: 'string', description: 'The exact text to replace (whitespace included)' },
          new_string: { type: 'string', description: 'The text to put in its place' },
          replace_all: { type: 'boolean', description: 'Replace every occurrence (default false)' },
        },
        required: ['path', 'old_string', 'new_string'],
        additionalProperties: false,
      },
    },
    needsApproval: true,
    async run(args, ctx) {
      const { old_string: oldS, new_string: newS, replace_all: all } = args;
      if (typeof oldS !== 'string' || oldS === '') return fail('edit_invalid_arguments', 'the "old_string" argument must be a non-empty string');
      if (typeof newS !== 'string') return fail('edit_invalid_arguments', 'the "new_string" argument must be a string');
      if (all !== undefined && typeof all !== 'boolean') return fail('edit_invalid_arguments', 'the "replace_all" argument must be a boolean');
      const target = await confine(args, ctx, 'read', guard);
      if ('status' in target && /no such file or directory/.test(target.output)) return fail('edit_missing_file', target.output);
      return withOpened(target, async ({ fd }, shown) => {
        const info = fstatSync(fd);
        if (!info.isFile()) return fail('edit_not_text', `${shown} is not a regular file`);
        if (info.size > EDIT_FILE_MAX_BYTES) return fail('edit_not_text', `${shown} is larger than ${EDIT_FILE_MAX_BYTES} bytes`);
        const bytes = readFileSync(fd);
        if (bytes.includes(0)) return fail('edit_not_text', `${shown} looks like a binary file`);
        const before = bytes.toString('utf8');
        const found = count(before, oldS, all ? undefined : 2);
        if (found === 0) return fail('edit_not_found', `old_string was not found in ${shown}`);
        if (found > 1 && !all) {
          const total = count(before, oldS);
          return fail('edit_ambiguous', `old_string was found ${total} times in ${shown}; add context to make it unique or set replace_all`);
        }
        const after = all ? before.split(oldS).join(newS) : before.replace(oldS, () => newS);
        if (after === before) return fail('edit_no_change', `old_string and new_string are the same; ${shown} is unchanged`);
        // The same inode, reopened for writing through the descriptor's /proc link: still confined.
        const wfd = openSync(`/proc/self/fd/${fd}`, constants.O_WRONLY | constants.O_NOCTTY);
        try {
          ftruncateSync(wfd, 0);
          const out = Buffer.from(after, 'utf8');
          for (let off = 0; off < out.length; ) off += writeSync(wfd, out, off, out.length - off);
        } finally {
          closeSync(wfd);
        }
        const n = all ? found : 1;
        return { status: 'ok', output: `edited ${shown}: ${n} replacement${n === 1 ? '' : 's'}\n${unifiedDiff(shown, before, after)}` };
      });
    },
  };
}
