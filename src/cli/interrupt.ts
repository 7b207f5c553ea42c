/**
 * `agentd interrupt SESSION`: interrupt the session's running turn and wait until it has
 * stopped (its `turn_interrupted`). A pending approval is aborted with the turn; a
 * running shell command is killed (docs/tools.md).
 *
 * Exit codes: 0 interrupted, 2 usage / connection / unknown session, 3 no turn running
 * (or it ended before the interrupt reached it), 130 Ctrl-C (the interrupt may still land).
 */
import { Command } from 'commander';
import type { Event } from '../../protocol/index.js';
import { newSubmissionId } from '../client/client.js';
import { describeError } from '../client/errors.js';
import { sanitizeLine } from '../render/sanitize.js';
import { addConnectionOptions, connectClient, type ConnectionFlags } from './connect.js';
import { CliExit, EXIT, runCliCommand } from './exit.js';
import { followSession } from './follow.js';
import { packageVersion } from './version.js';

export function registerInterrupt(program: Command): void {
  const cmd = new Command('interrupt')
    .description('interrupt the running turn of a session and wait until it stopped')
    .argument('<session_id>', 'the session')
    .version(packageVersion(), '-V, --version', 'print the version')
    .addHelpText(
      'after',
      '\nExit codes: 0 interrupted, 2 usage or connection error, 3 no turn running (or it ended first), 130 Ctrl-C.',
    );
  addConnectionOptions(cmd);
  cmd.action((sessionId: string, flags: ConnectionFlags) => runCliCommand('interrupt', () => interrupt(sessionId, flags)));
  program.addCommand(cmd);
}

/** The exit code `ev` means for an interrupt of `turnId` sent as `submissionId`, or null. */
export function interruptOutcome(ev: Event, turnId: string, submissionId: string): number | null {
  if (ev.msg.type === 'warning' && ev.submission_id === submissionId) {
    process.stderr.write(`agentd interrupt: ${sanitizeLine(ev.msg.message)}\n`);
    return EXIT.nothingPending;
  }
  if (ev.turn_id !== turnId) return null;
  if (ev.msg.type === 'turn_interrupted') {
    process.stderr.write(`interrupted turn ${turnId}\n`);
    return EXIT.ok;
  }
  if (ev.msg.type === 'turn_complete' || ev.msg.type === 'turn_failed') {
    process.stderr.write(`agentd interrupt: turn ${turnId} ended first (${ev.msg.type === 'turn_complete' ? 'complete' : 'failed'})\n`);
    return EXIT.nothingPending;
  }
  return null;
}

async function interrupt(sessionId: string, flags: ConnectionFlags): Promise<number> {
  const client = await connectClient(flags, `agentd-interrupt/${packageVersion()}`, { maxReconnectAttempts: 40, backoff: { initialMs: 200, maxMs: 2000 } });
  let decide: (ev: Event) => number | null = () => null;
  try {
    const following = await followSession(client, sessionId, { onEvent: (_b, ev) => decide(ev), sigintCode: EXIT.interrupted });
    try {
      const turnId = following.attached.session.active_turn_id;
      if (turnId === null) {
        process.stderr.write(`agentd interrupt: no turn is running in session ${sessionId}\n`);
        return EXIT.nothingPending;
      }
      const submissionId = newSubmissionId('interrupt');
      decide = (ev) => interruptOutcome(ev, turnId, submissionId);
      await client.submit(sessionId, { id: submissionId, op: { type: 'interrupt', turn_id: turnId } }).catch((err: unknown) => {
        throw new CliExit(`the interrupt was rejected: ${describeError(err)}`);
      });
      return await following.done;
    } finally {
      following.dispose();
    }
  } finally {
    client.close();
  }
}
