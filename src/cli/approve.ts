/**
 * `agentd approve SESSION [--decision approve|approve_for_session|deny|abort]`: answer the
 * approval the session (or one of its subagents) waits for. The request is shown first —
 * the tool, the whole command with its control characters made visible, the directory —
 * and, on a terminal without --decision, the user is asked.
 *
 * Exit codes: 0 answered (the daemon recorded the decision), 2 usage / connection /
 * unknown session / not a terminal and no --decision, 3 no approval is pending (or it was
 * answered elsewhere first), 130 Ctrl-C while asking.
 */
import { Command, Option } from 'commander';
import {
  ApprovalDecisionSchema,
  type ApprovalDecision,
  type Event,
  type ExecApprovalRequestMsg,
  type SessionDescriptor,
} from '../../protocol/index.js';
import { newSubmissionId, type AgentdClient } from '../client/client.js';
import { describeError } from '../client/errors.js';
import { sanitizeLine } from '../render/sanitize.js';
import { commandOf, describeCall } from '../render/tool-call.js';
import { askApproval } from './ask-approval.js';
import { addConnectionOptions, connectClient, type ConnectionFlags } from './connect.js';
import { CliExit, EXIT, runCliCommand } from './exit.js';
import { followSession, type Following } from './follow.js';
import { packageVersion } from './version.js';

interface ApproveFlags extends ConnectionFlags {
  decision?: ApprovalDecision;
}

export function registerApprove(program: Command): void {
  const cmd = new Command('approve')
    .description('answer the approval a session waits for (shown first; asked on a terminal without --decision)')
    .argument('<session_id>', 'the session waiting for approval')
    .addOption(new Option('--decision <decision>', 'the answer, without asking').choices(ApprovalDecisionSchema.options))
    .version(packageVersion(), '-V, --version', 'print the version')
    .addHelpText(
      'after',
      `
A subagent's approval is answered through its parent: "agentd approve PARENT" answers the
child's request when the parent itself waits for none.

Exit codes: 0 answered, 2 usage or connection error (or no terminal and no --decision),
3 no approval pending (or another frontend answered it first), 130 Ctrl-C.`,
    );
  addConnectionOptions(cmd);
  cmd.action((sessionId: string, flags: ApproveFlags) => runCliCommand('approve', () => approve(sessionId, flags)));
  program.addCommand(cmd);
}

/** Control characters as escapes (`\r`, `\t`, `\x1b`, `\u2028`…); line breaks stay. */
export function visibleControls(text: string): string {
  return text.replace(/[\x00-\x09\x0b-\x1f\x7f-\x9f\u2028\u2029]/g, (ch) => {
    if (ch === '\r') return '\\r';
    if (ch === '\t') return '\\t';
    const code = ch.charCodeAt(0);
    return code <= 0xff ? `\\x${code.toString(16).padStart(2, '0')}` : `\\u${code.toString(16).padStart(4, '0')}`;
  });
}

/** The request as shown before answering: tool, whole command (or arguments), directory. */
export function describeRequest(req: ExecApprovalRequestMsg, childOf: string | null): string {
  const command = commandOf(req.arguments);
  const what = command !== null ? `$ ${visibleControls(command).replace(/\n/g, '\n  ')}` : visibleControls(describeCall(req.tool, req.arguments));
  const lines = [
    `approval required · ${sanitizeLine(req.tool)}${childOf ? ` · subagent ${childOf}` : ''}`,
    `  ${what}`,
    `  in ${visibleControls(req.cwd)}`,
  ];
  return `${lines.join('\n')}\n`;
}

/** The pending request of the session, else of a subagent it waits on; null when none. */
function pendingOf(d: SessionDescriptor): { sessionId: string; request: ExecApprovalRequestMsg; child: boolean } | null {
  if (d.pending_approval) return { sessionId: d.session_id, request: d.pending_approval, child: false };
  if (d.pending_child_approval) {
    return { sessionId: d.pending_child_approval.child_session_id, request: d.pending_child_approval.request, child: true };
  }
  return null;
}

async function chooseDecision(flags: ApproveFlags, tool: string): Promise<ApprovalDecision> {
  if (flags.decision) return flags.decision;
  if (!process.stdin.isTTY) throw new CliExit('not a terminal: give --decision approve|approve_for_session|deny|abort');
  const ac = new AbortController();
  const onSigint = () => ac.abort();
  process.once('SIGINT', onSigint);
  try {
    const decision = await askApproval(ac.signal, tool);
    if (!decision) throw new CliExit('', EXIT.interrupted);
    return decision;
  } finally {
    process.off('SIGINT', onSigint);
  }
}

async function approve(sessionId: string, flags: ApproveFlags): Promise<number> {
  const client = await connectClient(flags, `agentd-approve/${packageVersion()}`, { maxReconnectAttempts: 40, backoff: { initialMs: 200, maxMs: 2000 } });
  try {
    return await answer(client, sessionId, flags);
  } finally {
    client.close();
  }
}

async function answer(client: AgentdClient, sessionId: string, flags: ApproveFlags): Promise<number> {
  // Events are judged by `decide`, set once the answer is sent (nothing ends the wait before).
  let decide: (ev: Event) => number | null = () => null;
  const follow = (id: string) => followSession(client, id, { onEvent: (_b, ev) => decide(ev), sigintCode: EXIT.interrupted });
  // The session's descriptor names the pending request: its own, or a subagent's.
  const parent = await follow(sessionId);
  let child: Following | null = null;
  try {
    const pending = pendingOf(parent.attached.session);
    if (!pending) {
      process.stderr.write(`agentd approve: session ${sessionId} is not waiting for an approval\n`);
      return EXIT.nothingPending;
    }
    process.stderr.write(describeRequest(pending.request, pending.child ? pending.sessionId : null));
    const decision = await chooseDecision(flags, pending.request.tool);
    if (pending.child) child = await follow(pending.sessionId);
    const submissionId = newSubmissionId('approve');
    const approvalId = pending.request.approval_id;
    // The request's approval_resolved, or the warning our submission gets when it is no longer pending.
    decide = (ev) => {
      if (ev.msg.type === 'approval_resolved' && ev.msg.approval_id === approvalId) {
        if (ev.submission_id === submissionId) {
          process.stderr.write(`${ev.msg.decision}\n`);
          return EXIT.ok;
        }
        process.stderr.write(`agentd approve: already answered elsewhere (${ev.msg.decision})\n`);
        return EXIT.nothingPending;
      }
      if (ev.msg.type === 'warning' && ev.submission_id === submissionId) {
        process.stderr.write(`agentd approve: ${sanitizeLine(ev.msg.message)}\n`);
        return EXIT.nothingPending;
      }
      return null;
    };
    const op = { type: 'exec_approval' as const, id: approvalId, decision };
    await client.submit(pending.sessionId, { id: submissionId, op }).catch((err: unknown) => {
      throw new CliExit(`the answer was rejected: ${describeError(err)}`);
    });
    return await (child ?? parent).done;
  } finally {
    parent.dispose();
    child?.dispose();
  }
}
