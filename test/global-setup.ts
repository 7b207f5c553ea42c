/**
 * Runs once before all test files: compile the project with tsc so that tests can spawn
 * the real daemon (`node bin/agentd.js` imports dist/). Type errors are reported but do
 * not stop the run (tsc still emits; `npm run typecheck` is the strict gate); a missing
 * dist/ entry point does.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, readdirSync, statSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');

export default function setup(): void {
  if (process.env.AGENTD_TEST_SKIP_BUILD === '1') return;
  const tsc = join(root, 'node_modules', 'typescript', 'bin', 'tsc');
  try {
    execFileSync(process.execPath, [tsc, '-p', join(root, 'tsconfig.json')], { cwd: root, stdio: 'pipe' });
  } catch (err) {
    const out = (err as { stdout?: Buffer }).stdout?.toString() ?? String(err);
    process.stderr.write(`[global-setup] tsc reported errors (continuing with what it emitted):\n${out}\n`);
  }
  if (!existsSync(join(root, 'dist', 'src', 'cli', 'main.js'))) {
    throw new Error('global-setup: dist/src/cli/main.js was not built; see the tsc output above');
  }
  buildWebIfStale();
}

/** Newest modification time under `dir` (files only). */
function newest(dir: string): number {
  let t = 0;
  for (const name of readdirSync(dir)) {
    const p = join(dir, name);
    const s = statSync(p);
    t = Math.max(t, s.isDirectory() ? newest(p) : s.mtimeMs);
  }
  return t;
}

/** The browser UI (web/ → dist/web, as `npm run build` does), rebuilt only when web/, protocol/ or src/render/ (which it imports) changed. */
function buildWebIfStale(): void {
  const index = join(root, 'dist', 'web', 'index.html');
  const sources = Math.max(newest(join(root, 'web')), newest(join(root, 'protocol')), newest(join(root, 'src', 'render')));
  if (existsSync(index) && statSync(index).mtimeMs >= sources) return;
  const vite = join(root, 'node_modules', 'vite', 'bin', 'vite.js');
  // NODE_ENV=production: vitest sets "test", which would make Vite bundle preact/debug.
  execFileSync(process.execPath, [vite, 'build', '--config', join(root, 'web', 'vite.config.ts')], {
    cwd: root,
    stdio: 'pipe',
    env: { ...process.env, NODE_ENV: 'production' },
  });
}
