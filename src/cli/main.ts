/**
 * The `agentd` command line. Each subcommand lives in its own module exporting a
 * `register(program)` function; add it to COMMANDS below (one line).
 */
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Command } from 'commander';
import { registerServe } from './serve.js';
import { registerAttach } from './attach.js';
import { registerSend } from './send.js';
import { registerSessions } from './sessions.js';
import { registerOpen } from './open.js';

/** Registers one subcommand on the program. */
export type RegisterCommand = (program: Command) => void;

const COMMANDS: RegisterCommand[] = [
  registerServe,
  registerAttach,
  registerSend,
  registerSessions,
  registerOpen,
];

/** The version in the package.json above this module (works from src/ and dist/). */
export function packageVersion(): string {
  let dir = dirname(fileURLToPath(import.meta.url));
  for (;;) {
    const file = join(dir, 'package.json');
    if (existsSync(file)) {
      try {
        const pkg = JSON.parse(readFileSync(file, 'utf8')) as { name?: string; version?: string };
        if (pkg.name === 'agentd' && typeof pkg.version === 'string') return pkg.version;
      } catch {
        // not ours; keep looking
      }
    }
    const parent = dirname(dir);
    if (parent === dir) return '0.0.0';
    dir = parent;
  }
}

export function buildProgram(): Command {
  const program = new Command('agentd')
    .description('A daemon that hosts AI-agent sessions, journaled in SQLite and served over WebSocket.')
    .version(packageVersion(), '-V, --version', 'print the version')
    .showHelpAfterError();
  for (const register of COMMANDS) register(program);
  return program;
}

export async function main(argv: string[] = process.argv): Promise<void> {
  await buildProgram().parseAsync(argv);
}
