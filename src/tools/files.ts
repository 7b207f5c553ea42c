/**
 * The file tools `read_file`, `write_file` and `list_dir`, confined to the session's
 * working directory (see confine.ts). Refusals and I/O failures come back as
 * `{status: 'error'}` results the model can read; these tools never throw.
 */
import { mkdir, open, readdir, stat, writeFile } from 'node:fs/promises';
import { dirname } from 'node:path';
import { StringDecoder } from 'node:string_decoder';
import type { Tool, ToolContext, ToolResult } from './types.js';
import { resolveInside } from './confine.js';

/** Most bytes of a file `read_file` returns. */
export const READ_FILE_CAP_BYTES = 256 * 1024;
/** Most entries `list_dir` returns. */
export const LIST_DIR_CAP_ENTRIES = 1000;

const pathParam = { type: 'string', description: 'Path relative to the working directory' };

const error = (output: string): ToolResult => ({ status: 'error', output });

/** Human-readable text for a failed fs call. */
function describe(err: unknown, path: string): string {
  const code = (err as NodeJS.ErrnoException)?.code;
  switch (code) {
    case 'ENOENT':
      return `${path}: no such file or directory`;
    case 'EACCES':
    case 'EPERM':
      return `${path}: permission denied`;
    case 'EISDIR':
      return `${path} is a directory`;
    case 'ENOTDIR':
      return `${path}: a component of the path is not a directory`;
    default:
      return `${path}: ${err instanceof Error ? err.message : String(err)}`;
  }
}

/** Validates the `path` argument and confines it; returns the real path or an error result. */
function confine(args: Record<string, unknown>, ctx: ToolContext, fallback?: string): { path: string; shown: string } | ToolResult {
  const raw = args['path'] ?? fallback;
  if (typeof raw !== 'string' || raw === '') return error('the "path" argument must be a non-empty string');
  const r = resolveInside(ctx.cwd, raw);
  return r.ok ? { path: r.path, shown: raw } : error(`refused: ${r.reason}`);
}

/** `read_file {path}`: a UTF-8 text file, capped at READ_FILE_CAP_BYTES. */
export const readFileTool: Tool = {
  spec: {
    name: 'read_file',
    description: `Read a text file inside the working directory (at most ${READ_FILE_CAP_BYTES / 1024} KiB are returned).`,
    parameters: { type: 'object', properties: { path: pathParam }, required: ['path'], additionalProperties: false },
  },
  needsApproval: false,
  async run(args, ctx) {
    const target = confine(args, ctx);
    if ('status' in target) return target;
    try {
      const info = await stat(target.path);
      if (info.isDirectory()) return error(`${target.shown} is a directory; use list_dir`);
      if (!info.isFile()) return error(`${target.shown} is not a regular file`);
      const handle = await open(target.path, 'r');
      try {
        const buf = Buffer.alloc(Math.min(info.size, READ_FILE_CAP_BYTES));
        const { bytesRead } = await handle.read(buf, 0, buf.length, 0);
        const bytes = buf.subarray(0, bytesRead);
        if (bytes.includes(0)) return error(`${target.shown} looks like a binary file (${info.size} bytes); not shown`);
        // StringDecoder holds back a multi-byte character cut by the cap.
        const text = new StringDecoder('utf8').write(bytes);
        if (info.size <= READ_FILE_CAP_BYTES) return { status: 'ok', output: text };
        return { status: 'ok', output: `${text}\n[truncated: showing the first ${bytesRead} of ${info.size} bytes]` };
      } finally {
        await handle.close();
      }
    } catch (err) {
      return error(describe(err, target.shown));
    }
  },
};

/** `write_file {path, content}`: creates or replaces a file, creating missing parent directories. */
export const writeFileTool: Tool = {
  spec: {
    name: 'write_file',
    description: 'Create or overwrite a text file inside the working directory; missing parent directories are created.',
    parameters: {
      type: 'object',
      properties: { path: pathParam, content: { type: 'string', description: 'The complete new file content' } },
      required: ['path', 'content'],
      additionalProperties: false,
    },
  },
  needsApproval: true,
  async run(args, ctx) {
    const content = args['content'];
    if (typeof content !== 'string') return error('the "content" argument must be a string');
    const target = confine(args, ctx);
    if ('status' in target) return target;
    try {
      await mkdir(dirname(target.path), { recursive: true });
      await writeFile(target.path, content, 'utf8');
      return { status: 'ok', output: `wrote ${Buffer.byteLength(content)} bytes to ${target.shown}` };
    } catch (err) {
      return error(describe(err, target.shown));
    }
  },
};

/** `list_dir {path}`: sorted entries, directories with a trailing `/`, symlinks with `@`. */
export const listDirTool: Tool = {
  spec: {
    name: 'list_dir',
    description: 'List a directory inside the working directory ("." for the working directory itself). Directories end with "/", symbolic links with "@".',
    parameters: { type: 'object', properties: { path: pathParam }, required: ['path'], additionalProperties: false },
  },
  needsApproval: false,
  async run(args, ctx) {
    const target = confine(args, ctx, '.');
    if ('status' in target) return target;
    try {
      const entries = await readdir(target.path, { withFileTypes: true });
      const names = entries
        .map((e) => e.name + (e.isDirectory() ? '/' : e.isSymbolicLink() ? '@' : ''))
        .sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
      if (names.length === 0) return { status: 'ok', output: '(empty directory)' };
      const shown = names.slice(0, LIST_DIR_CAP_ENTRIES);
      const note = names.length > shown.length ? `\n[truncated: ${shown.length} of ${names.length} entries shown]` : '';
      return { status: 'ok', output: shown.join('\n') + note };
    } catch (err) {
      return error(describe(err, target.shown));
    }
  },
};

/** All file tools, in the order they are offered to the model. */
export const fileTools: Tool[] = [readFileTool, writeFileTool, listDirTool];
