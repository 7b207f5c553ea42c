/**
 * The `glob {pattern, path?}` and `grep {pattern, path?, glob?, ignore_case?}` tools:
 * confined to the session's cwd, never approved. Each call runs in its own worker thread
 * (search_worker.ts) under SEARCH_TIMEOUT_MS; the worker is terminated on interrupt or
 * timeout, so neither a huge tree nor a catastrophic regular expression blocks the
 * daemon's event loop. Answers are capped at SEARCH_MAX_ENTRIES / SEARCH_MAX_BYTES.
 */
import { Worker } from 'node:worker_threads';
import type { Tool, ToolContext, ToolResult } from './types.js';
import type { Protected } from './confine.js';
import { confine, error, withOpened } from './files.js';
import type { SearchAnswer, SearchJob } from './search_worker.js';

export const SEARCH_TIMEOUT_MS = 10_000;
export const SEARCH_MAX_ENTRIES = 1000;
export const SEARCH_MAX_BYTES = 64 * 1024;

const WORKER_URL = new URL('./search_worker.js', import.meta.url);

/** Runs one job in a fresh worker; ends it on abort or after `timeoutMs`. */
function inWorker(job: SearchJob, signal: AbortSignal, timeoutMs: number): Promise<ToolResult> {
  return new Promise((resolve) => {
    if (signal.aborted) return resolve(error('search_interrupted: the search was interrupted'));
    const worker = new Worker(WORKER_URL, { workerData: job, resourceLimits: { maxOldGenerationSizeMb: 256 } });
    let done = false;
    const finish = (r: ToolResult) => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      signal.removeEventListener('abort', onAbort);
      void worker.terminate();
      resolve(r);
    };
    const onAbort = () => finish(error('search_interrupted: the search was interrupted'));
    const timer = setTimeout(() => finish(error(`search_timeout: the ${job.op} took longer than ${timeoutMs / 1000} s and was stopped`)), timeoutMs);
    signal.addEventListener('abort', onAbort, { once: true });
    worker.once('message', (a: SearchAnswer) => finish(a.ok ? { status: 'ok', output: a.output } : error(a.output)));
    worker.once('error', (err) => finish(error(`search_failed: ${err.message}`)));
    worker.once('exit', (code) => finish(error(`search_failed: the search worker exited (${code})`)));
  });
}

async function search(op: 'glob' | 'grep', args: Record<string, unknown>, ctx: ToolContext, guard: Protected | undefined, timeoutMs: number) {
  const pattern = args['pattern'];
  if (typeof pattern !== 'string' || pattern === '') return error(`${op}_invalid_arguments: the "pattern" argument must be a non-empty string`);
  const glob = args['glob'];
  if (glob !== undefined && (typeof glob !== 'string' || glob === '')) return error('grep_invalid_arguments: the "glob" argument must be a non-empty string');
  const ignoreCase = args['ignore_case'];
  if (ignoreCase !== undefined && typeof ignoreCase !== 'boolean') return error('grep_invalid_arguments: the "ignore_case" argument must be a boolean');
  const root = await confine({ path: '.' }, ctx, 'dir', guard);
  return withOpened(root, async (rootDir) =>
    withOpened(await confine(args, ctx, 'dir', guard, '.'), async (start) =>
      inWorker(
        {
          op,
          root: rootDir.real,
          start: start.real,
          pattern,
          ...(typeof glob === 'string' && { glob }),
          ...(ignoreCase === true && { ignoreCase: true }),
          maxEntries: SEARCH_MAX_ENTRIES,
          maxBytes: SEARCH_MAX_BYTES,
        },
        ctx.signal,
        timeoutMs,
      ),
    ),
  );
}

const dirParam = { type: 'string', description: 'Directory to search, relative to the working directory (default ".")' };

export function createSearchTools(guard: Protected | undefined, timeoutMs = SEARCH_TIMEOUT_MS): [glob: Tool, grep: Tool] {
  const globTool: Tool = {
    spec: {
      name: 'glob',
      description:
        'Find files by name pattern (e.g. "**/*.ts", "src/**/test_*.py"; a pattern without "/" matches the file name at any depth). ' +
        `Skips .git, .gitignore'd paths; sorted; at most ${SEARCH_MAX_ENTRIES} paths.`,
      parameters: {
        type: 'object',
        properties: { pattern: { type: 'string', description: 'Glob pattern' }, path: dirParam },
        required: ['pattern'],
        additionalProperties: false,
      },
    },
    needsApproval: false,
    run: (args, ctx) => search('glob', args, ctx, guard, timeoutMs),
  };
  const grepTool: Tool = {
    spec: {
      name: 'grep',
      description:
        'Search file contents with a JavaScript regular expression; answers path:line:text lines sorted by path and line. ' +
        `Skips .git, .gitignore'd and binary files; at most ${SEARCH_MAX_ENTRIES} lines.`,
      parameters: {
        type: 'object',
        properties: {
          pattern: { type: 'string', description: 'JavaScript regular expression' },
          path: dirParam,
          glob: { type: 'string', description: 'Only files matching this glob (e.g. "*.ts")' },
          ignore_case: { type: 'boolean', description: 'Case-insensitive (default false)' },
        },
        required: ['pattern'],
        additionalProperties: false,
      },
    },
    needsApproval: false,
    run: (args, ctx) => search('grep', args, ctx, guard, timeoutMs),
  };
  return [globTool, grepTool];
}
