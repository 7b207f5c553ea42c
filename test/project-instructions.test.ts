/** AGENTS.md project instructions in the system prompt: appended to a configured prompt too, cut at 64 KiB, turned off by config. */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, expect, test } from 'vitest';
import { ConfigSchema } from '../src/config/config.js';
import { systemPromptFor } from '../src/session/system_prompt.js';
import { cleanup, tempDir } from './helpers/session.js';

const dir = tempDir('agentd-agents-unit-');
afterAll(() => cleanup(dir));

test('a configured prompt gets the instructions appended; project_instructions:false leaves it alone', () => {
  const cwd = join(dir, 'a', 'b');
  mkdirSync(cwd, { recursive: true });
  writeFileSync(join(dir, 'AGENTS.md'), 'Run npm test before you finish.\n');
  const on = ConfigSchema.parse({});
  expect(on.project_instructions).toBe(true);
  expect(systemPromptFor('Own prompt.', undefined, on, cwd, [], Date.now())).toBe(
    'Own prompt.\n\n# Project instructions (AGENTS.md)\n\nRun npm test before you finish.\n',
  );
  const off = ConfigSchema.parse({ project_instructions: false });
  expect(systemPromptFor('Own prompt.', undefined, off, cwd, [], Date.now())).toBe('Own prompt.');
});

test('an empty AGENTS.md adds nothing; a file with no AGENTS.md up to / gets none', () => {
  const cwd = join(dir, 'empty');
  mkdirSync(cwd, { recursive: true });
  writeFileSync(join(cwd, 'AGENTS.md'), '');
  const cfg = ConfigSchema.parse({});
  expect(systemPromptFor('P', undefined, cfg, cwd, [], Date.now())).toBe('P');
});
