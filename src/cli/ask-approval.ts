/** `agentd send` on a terminal: asking whether to approve a tool call ([y]es / [a]lways / [n]o / [x] abort). */
import { createInterface } from 'node:readline/promises';
import type { ApprovalDecision } from '../../protocol/index.js';

const ANSWERS: Record<string, ApprovalDecision> = {
  y: 'approve',
  yes: 'approve',
  a: 'approve_for_session',
  always: 'approve_for_session',
  n: 'deny',
  no: 'deny',
  x: 'abort',
  abort: 'abort',
};

/**
 * Ask on the terminal until a valid answer; null when aborted (answered elsewhere, or the
 * turn ended). `reminder` (the start of a call too long for the screen) is printed right
 * above the question, so the start of what is approved is always in view.
 */
export async function askApproval(signal: AbortSignal, tool: string, reminder?: string): Promise<ApprovalDecision | null> {
  // [a]lways approves the exact command on a shell call, identical arguments otherwise.
  const always = tool === 'shell' ? '[a]lways (this command, this session)' : '[a]lways (these arguments, this session)';
  if (reminder !== undefined) process.stderr.write(`${reminder}\n`);
  const rl = createInterface({ input: process.stdin, output: process.stderr });
  rl.on('SIGINT', () => process.emit('SIGINT'));
  try {
    for (;;) {
      const reply = (await rl.question(`approve? [y]es / ${always} / [n]o / [x] abort turn: `, { signal }))
        .trim()
        .toLowerCase();
      const decision = ANSWERS[reply];
      if (decision) return decision;
    }
  } catch {
    return null;
  } finally {
    rl.close();
  }
}
