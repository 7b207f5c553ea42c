/** The approval request: what wants to run and where, and the keys to answer it. */
import { Box } from 'ink';
import { approveForSessionLabel, type ExecApprovalRequestMsg } from '../../protocol/index.js';
import { Rows } from './rows.js';
import { sanitize } from '../render/sanitize.js';
import { seg, wrap, type Line } from './text.js';
import { theme } from './theme.js';
import { commandOf, describeCall } from '../render/tool-call.js';

/** Body rows of the prompt (inside the border) for an inner width. */
export function approvalLines(req: ExecApprovalRequestMsg, innerWidth: number, subagent?: string): Line[] {
  const w = Math.max(10, innerWidth);
  const cmd = commandOf(req.arguments);
  const lines: Line[] = [];
  lines.push([
    seg('Approval required', { bold: true, color: theme.warning }),
    seg(` · ${req.tool}${subagent ? ` · subagent ${subagent}` : ''}`, { color: theme.muted }),
  ]);
  if (cmd !== null) {
    lines.push(...wrap([seg(sanitize(cmd), { bold: true, color: theme.command })], w, { first: [seg('$ ', { color: theme.muted })], rest: [seg('  ')] }));
  } else {
    const desc = describeCall(req.tool, req.arguments);
    lines.push(...wrap([seg(sanitize(desc || '(no arguments)'), { color: theme.command })], w));
  }
  lines.push(...wrap([seg(sanitize(req.cwd), { color: theme.text })], w, { first: [seg('in ', { color: theme.muted })], rest: [seg('   ')] }));
  lines.push(
    ...wrap(
      [
        seg('y', { bold: true, color: theme.success }),
        seg(' approve   ', { color: theme.muted }),
        seg('a', { bold: true, color: theme.success }),
        seg(` ${approveForSessionLabel(req.tool).toLowerCase()}   `, { color: theme.muted }),
        seg('n', { bold: true, color: theme.error }),
        seg(' deny   ', { color: theme.muted }),
        seg('esc', { bold: true, color: theme.warning }),
        seg(' interrupt turn', { color: theme.muted }),
      ],
      w,
    ),
  );
  return lines;
}

export interface ApprovalPromptProps {
  request: ExecApprovalRequestMsg;
  width: number;
  /** The answer was sent; waiting for the daemon. */
  answered?: boolean;
  /** The request is a subagent's (this session's child): its session id. */
  subagent?: string;
}

/** Total height of the prompt for a width (border included). */
export function approvalPromptHeight(req: ExecApprovalRequestMsg, width: number, subagent?: string): number {
  return approvalLines(req, width - 4, subagent).length + 2;
}

export function ApprovalPrompt({ request, width, answered, subagent }: ApprovalPromptProps) {
  const lines = approvalLines(request, width - 4, subagent);
  if (answered) lines[lines.length - 1] = [seg('sending answer…', { color: theme.muted, italic: true })];
  return (
    <Box borderStyle="round" borderColor={theme.warning} paddingX={1} width={width} flexDirection="column">
      <Rows lines={lines} />
    </Box>
  );
}
