/**
 * The `agentd` command line. Each subcommand lives in its own module exporting a
 * `register(program)` function; add it to COMMANDS below (one line).
 */
import { Command } from 'commander';
import { registerServe } from './serve.js';
import { registerAttach } from './attach.js';
import { registerSend } from './send.js';
import { registerSessions } from './sessions.js';
import { packageVersion } from './version.js';
import { registerOpen } from './open.js';
import { registerCluster } from './cluster.js';
import { registerNew } from './new.js';
import { registerApprove } from './approve.js';
import { registerInterrupt } from './interrupt.js';
import { registerWatch } from './watch.js';
import { registerAcp } from './acp.js';
import { registerRm } from './rm.js';

/** Registers one subcommand on the program. */
export type RegisterCommand = (program: Command) => void;

const COMMANDS: RegisterCommand[] = [
  registerServe,
  registerAttach,
  registerSend,
  registerNew,
  registerApprove,
  registerInterrupt,
  registerWatch,
  registerSessions,
  registerOpen,
  registerCluster,
  registerAcp,
  registerRm,
];

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
