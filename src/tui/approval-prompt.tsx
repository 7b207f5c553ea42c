/** The approval request: what wants to run and where, and the keys to answer it. */
import { Box } from 'ink';
import { approveForSessionLabel, type ExecApprovalRequestMsg } from '../../protocol/index.js';
import { Rows } from './rows.js';
import { sanitize } from '../render/sanitize.js';
import { seg, wrap, type Line, type Seg } from './text.js';
import { theme } from './theme.js';
import { callLines, visibleText } from '../render/call-view.js';

/** The fewest rows the prompt's call may take, however small the terminal. */
const MIN_CALL_ROWS = 4;

/** Rows of the call itself (the whole command, every argument), at most `maxRows`, its start always kept. */
function callRows(req: ExecApprovalRequestMsg, w: number, maxRows: number): Line[] {
  const rows: Line[] = [];
  // Each source line is cut to what `maxRows` rows could hold before wrapping (a 1 MB line stays cheap).
  const budget = maxRows * w;
  for (const line of callLines(req.arguments)) {
    if (rows.length > maxRows) break;
    let room = budget;
    const segs: Seg[] = [];
    for (const part of line) {
      if (room <= 0) break;
      const text = part.text.length > room ? part.text.slice(0, room) : part.text;
      room -= text.length;
      segs.push(part.escape ? seg(text, { color: theme.warning, inverse: true }) : seg(text, { bold: true, color: theme.command }));
    }
    rows.push(...wrap(segs, w, { rest: [seg('  ')] }));
  }
  if (rows.length <= maxRows) return rows;
  const kept = rows.slice(0, maxRows - 1);
  kept.push([seg('… the rest of this call is not shown (it is longer than the terminal); press n to deny', { color: theme.warning, italic: true })]);
  return kept;
}

/**
 * Body rows of the prompt (inside the border) for an inner width. The call gets at most
 * `maxCallRows` rows and its first line is always the first row after the title.
 */
export function approvalLines(req: ExecApprovalRequestMsg, innerWidth: number, subagent?: string, maxCallRows = 12): Line[] {
  const w = Math.max(10, innerWidth);
  const lines: Line[] = [];
  lines.push([
    seg('Approval required', { bold: true, color: theme.warning }),
    seg(` · ${sanitize(req.tool)}${subagent ? ` · subagent ${subagent}` : ''}`, { color: theme.muted }),
  ]);
  lines.push(...callRows(req, w, Math.max(MIN_CALL_ROWS, maxCallRows)));
  lines.push(...wrap([seg(visibleText(req.cwd), { color: theme.text })], w, { first: [seg('in ', { color: theme.muted })], rest: [seg('   ')] }));
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
  /** Rows the call may take (the terminal's height less the rest of the screen). */
  maxCallRows?: number;
}

/** Total height of the prompt for a width (border included). */
export function approvalPromptHeight(req: ExecApprovalRequestMsg, width: number, subagent?: string, maxCallRows?: number): number {
  return approvalLines(req, width - 4, subagent, maxCallRows).length + 2;
}

/** The rows a prompt's call may take on a terminal of `rows` rows: what is left after the rest of the screen. */
export function callRowsFor(rows: number): number {
  return Math.max(MIN_CALL_ROWS, rows - 10);
}

export function ApprovalPrompt({ request, width, answered, subagent, maxCallRows }: ApprovalPromptProps) {
  const lines = approvalLines(request, width - 4, subagent, maxCallRows);
  if (answered) lines[lines.length - 1] = [seg('sending answer…', { color: theme.muted, italic: true })];
  return (
    <Box borderStyle="round" borderColor={theme.warning} paddingX={1} width={width} flexDirection="column">
      <Rows lines={lines} />
    </Box>
  );
}
