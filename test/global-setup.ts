/**
 * Runs once before all test files: compile the project with tsc so that tests can spawn
 * the real daemon (`node bin/agentd.js` imports dist/). Type errors are reported but do
 * not stop the run (tsc still emits; `npm run typecheck` is the strict gate); a missing
 * dist/ entry point does.
 */
import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
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
}
