/**
 * The file tools `read_file`, `write_file` and `list_dir`, confined to the session's
 * working directory (see confine.ts), the daemon's own files refused (protect.ts).
 * Refusals and I/O failures come back as `{status: 'error'}` results the model can read;
 * these tools never throw.
 */
import { fstatSync, ftruncate, read, readSync, writeFile } from 'node:fs';
import { readdir } from 'node:fs/promises';
import { promisify } from 'node:util';
import { StringDecoder } from 'node:string_decoder';
import type { Tool, ToolContext, ToolResult } from './types.js';
import { type OpenMode, type Opened, openInside, type Protected } from './confine.js';
import { dataDirGuard } from './protect.js';

/** Most bytes of a file `read_file` returns. */
export const READ_FILE_CAP_BYTES = 256 * 1024;
/** Most entries `list_dir` returns. */
export const LIST_DIR_CAP_ENTRIES = 1000;
/**
 * A file of at most this many bytes is read with one synchronous read(2) on its open
 * descriptor (a regular file, fstat says): from the page cache that is a copy, cheaper
 * than a thread-pool round trip; a larger one is read through the thread pool.
 */
export const SYNC_READ_BYTES = 64 * 1024;

const readAsync = promisify(read);
const ftruncateAsync = promisify(ftruncate);
const writeFileAsync = promisify(writeFile);

export const pathParam = { type: 'string', description: 'Path relative to the working directory' };

export const error = (output: string): ToolResult => ({ status: 'error', output });

/** Human-readable text for a failed fs call. */
export function describe(err: unknown, path: string): string {
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

/** Opens the `path` argument for `mode`, confined; the opened handle or an error result. */
export async function confine(
  args: Record<string, unknown>,
  ctx: ToolContext,
  mode: OpenMode,
  guard: Protected | undefined,
  fallback?: string,
): Promise<{ opened: Opened; shown: string } | ToolResult> {
  const raw = args['path'] ?? fallback;
  if (typeof raw !== 'string' || raw === '') return error('the "path" argument must be a non-empty string');
  const r = await openInside(ctx.cwd, raw, mode, guard);
  if (r.ok) return { opened: r.opened, shown: raw };
  return error(r.code ? describe(Object.assign(new Error(r.reason), { code: r.code }), raw) : `refused: ${r.reason}`);
}

/** Runs `use` on the opened file, closing it afterwards; I/O failures become error results. */
export async function withOpened(
  target: { opened: Opened; shown: string } | ToolResult,
  use: (o: Opened, shown: string) => Promise<ToolResult>,
): Promise<ToolResult> {
  if ('status' in target) return target;
  try {
    return await use(target.opened, target.shown);
  } catch (err) {
    return error(describe(err, target.shown));
  } finally {
    try {
      await target.opened.close();
    } catch {
      /* a failed close loses nothing that was read; a write's errors surfaced before */
    }
  }
}

export interface FileToolsOptions {
  /** The daemon's data dir, whose own files the tools refuse. */
  dataDir?: string;
}

/** The three file tools, in the order they are offered to the model. */
export function createFileTools(options: FileToolsOptions = {}): [read: Tool, write: Tool, list: Tool] {
  const guard = options.dataDir !== undefined ? dataDirGuard(options.dataDir) : undefined;

  /** `read_file {path}`: a UTF-8 text file, capped at READ_FILE_CAP_BYTES. */
  const readFileTool: Tool = {
    spec: {
      name: 'read_file',
      description: `Read a text file inside the working directory (at most ${READ_FILE_CAP_BYTES / 1024} KiB are returned).`,
      parameters: { type: 'object', properties: { path: pathParam }, required: ['path'], additionalProperties: false },
    },
    needsApproval: false,
    run: async (args, ctx) =>
      withOpened(await confine(args, ctx, 'read', guard), async ({ fd }, shown) => {
        // fstat of an open descriptor answers from the inode at once: no thread-pool round trip.
        const info = fstatSync(fd);
        if (info.isDirectory()) return error(`${shown} is a directory; use list_dir`);
        if (!info.isFile()) return error(`${shown} is not a regular file`);
        const buf = Buffer.alloc(Math.min(info.size, READ_FILE_CAP_BYTES));
        const bytesRead =
          buf.length <= SYNC_READ_BYTES ? readSync(fd, buf, 0, buf.length, 0) : (await readAsync(fd, buf, 0, buf.length, 0)).bytesRead;
        const bytes = buf.subarray(0, bytesRead);
        if (bytes.includes(0)) return error(`${shown} looks like a binary file (${info.size} bytes); not shown`);
        // StringDecoder holds back a multi-byte character cut by the cap.
        const text = new StringDecoder('utf8').write(bytes);
        if (info.size <= READ_FILE_CAP_BYTES) return { status: 'ok', output: text };
        return { status: 'ok', output: `${text}\n[truncated: showing the first ${bytesRead} of ${info.size} bytes]` };
      }),
  };

  /** `write_file {path, content}`: creates or replaces a file, creating missing parent directories. */
  const writeFileTool: Tool = {
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
      return withOpened(await confine(args, ctx, 'write', guard), async ({ fd }, shown) => {
        // Checked on the open descriptor: a FIFO or device is refused, never written or waited on.
        if (!fstatSync(fd).isFile()) return error(`${shown} is not a regular file`);
        await ftruncateAsync(fd, 0);
        await writeFileAsync(fd, content, 'utf8');
        return { status: 'ok', output: `wrote ${Buffer.byteLength(content)} bytes to ${shown}` };
      });
    },
  };

  /** `list_dir {path}`: sorted entries, directories with a trailing `/`, symlinks with `@`. */
  const listDirTool: Tool = {
    spec: {
      name: 'list_dir',
      description: 'List a directory inside the working directory ("." for the working directory itself). Directories end with "/", symbolic links with "@".',
      parameters: { type: 'object', properties: { path: pathParam }, required: ['path'], additionalProperties: false },
    },
    needsApproval: false,
    run: async (args, ctx) =>
      withOpened(await confine(args, ctx, 'dir', guard, '.'), async ({ fd }) => {
        const entries = await readdir(`/proc/self/fd/${fd}`, { withFileTypes: true });
        const names = entries
          .map((e) => e.name + (e.isDirectory() ? '/' : e.isSymbolicLink() ? '@' : ''))
          .sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
        if (names.length === 0) return { status: 'ok', output: '(empty directory)' };
        const shown = names.slice(0, LIST_DIR_CAP_ENTRIES);
        const note = names.length > shown.length ? `\n[truncated: ${shown.length} of ${names.length} entries shown]` : '';
        return { status: 'ok', output: shown.join('\n') + note };
      }),
  };

  return [readFileTool, writeFileTool, listDirTool];
}

/** The file tools without a data dir to protect (library use, benchmarks, tests). */
export const fileTools = createFileTools();
export const [readFileTool, writeFileTool, listDirTool] = fileTools;
