/**
 * Plain-text rendering of events for `agentd send`: the agent's replies go to `out`
 * (stdout, so `reply=$(agentd send …)` captures just the answer); everything else —
 * the echoed message, tool calls and their output, approvals, the turn's end — goes to
 * `log` (stderr). Colours only when asked for (a TTY and no NO_COLOR).
 */
import type { Event, EventMsg, EventMsgOf } from '../../protocol/index.js';
import { formatCount, formatDuration, turnSummary } from './format.js';
import { sanitize } from './sanitize.js';
import { describeCall } from './tool-call.js';
import { callLines, visibleText, type CallLine } from './call-view.js';

export interface Sink {
  write(text: string): unknown;
}

const CODES = {
  dim: ['\x1b[2m', '\x1b[22m'],
  bold: ['\x1b[1m', '\x1b[22m'],
  red: ['\x1b[31m', '\x1b[39m'],
  green: ['\x1b[32m', '\x1b[39m'],
  yellow: ['\x1b[33m', '\x1b[39m'],
  cyan: ['\x1b[36m', '\x1b[39m'],
  gray: ['\x1b[90m', '\x1b[39m'],
} as const;
type Color = keyof typeof CODES;

const DECISION_TEXT = {
  approve: 'approved',
  approve_for_session: 'approved for this session',
  deny: 'denied',
  abort: 'aborted',
} as const;

export class PlainPrinter {
  /** Whether the last write to each sink ended a line. */
  private outAtLineStart = true;
  private logAtLineStart = true;
  /** The current model step streamed deltas (so agent_message only ends the line). */
  private streamed = false;
  /** call_ids whose output was streamed. */
  private readonly streamedOutput = new Set<string>();

  constructor(
    private readonly out: Sink,
    private readonly log: Sink,
    private readonly color = false,
  ) {}

  private c(color: Color, text: string): string {
    if (!this.color) return text;
    const [on, off] = CODES[color];
    return `${on}${text}${off}`;
  }

  private writeOut(text: string): void {
    if (text === '') return;
    this.out.write(text);
    this.outAtLineStart = text.endsWith('\n');
  }

  private writeLog(text: string): void {
    if (text === '') return;
    this.endOutLine();
    this.log.write(text);
    this.logAtLineStart = text.endsWith('\n');
  }

  private endOutLine(): void {
    if (!this.outAtLineStart) {
      this.out.write('\n');
      this.outAtLineStart = true;
    }
  }

  private logLine(text: string): void {
    if (!this.logAtLineStart) this.writeLog('\n');
    this.writeLog(`${text}\n`);
  }

  /** Indented tool output, streamed chunk by chunk. */
  private writeOutput(text: string, stderr: boolean): void {
    const clean = sanitize(text);
    if (clean === '') return;
    let s = '';
    for (const ch of clean) {
      if (this.logAtLineStart && ch !== '\n') {
        s += this.c('gray', '  │ ');
        this.logAtLineStart = false;
      }
      s += ch;
      if (ch === '\n') this.logAtLineStart = true;
    }
    this.endOutLine();
    this.log.write(stderr ? this.c('red', s) : s);
  }

  /** A line of a call with its escapes highlighted. */
  callLine(line: CallLine): string {
    return line.map((part) => (part.escape ? this.c('yellow', part.text) : this.c('bold', part.text))).join('');
  }

  /** A note from the command itself (not an event). */
  note(text: string, color: Color = 'gray'): void {
    this.logLine(this.c(color, text));
  }

  /** One printer per event type; other events print nothing. */
  private static readonly ON_EVENT: { [T in EventMsg['type']]?: (p: PlainPrinter, m: EventMsgOf<T>) => void } = {
    user_message: (p, m) => {
      p.logLine(`${p.c('cyan', '›')} ${p.c('bold', sanitize(m.text))}${m.mode !== 'turn' ? p.c('gray', ` (${m.mode})`) : ''}`);
    },
    agent_message_delta: (p, m) => {
      if (!p.logAtLineStart) p.writeLog('\n');
      p.streamed = true;
      p.writeOut(sanitize(m.delta));
    },
    agent_message: (p, m) => {
      if (!p.streamed && m.text !== '') p.writeOut(sanitize(m.text));
      p.endOutLine();
      p.streamed = false;
    },
    tool_call_begin: (p, m) => {
      p.endOutLine();
      p.streamed = false;
      if (m.tool === 'shell') {
        // A command is shown as an approval prompt shows it: control characters visible, blank runs collapsed.
        for (const line of callLines(m.arguments)) p.logLine(p.callLine(line));
        return;
      }
      p.logLine(`${p.c('bold', m.tool)} ${sanitize(describeCall(m.tool, m.arguments))}`);
    },
    exec_output_delta: (p, m) => {
      p.streamedOutput.add(m.call_id);
      p.writeOutput(m.chunk, m.stream === 'stderr');
    },
    tool_call_end: (p, m) => {
      if (!p.streamedOutput.has(m.call_id) && m.output !== '') p.writeOutput(m.output, false);
      p.streamedOutput.delete(m.call_id);
      const dur = p.c('gray', ` (${formatDuration(m.duration_ms)})`);
      const code = m.exit_code !== undefined && m.exit_code !== null ? `exit ${m.exit_code}` : m.status;
      const text =
        m.status === 'ok'
          ? p.c('green', `  └ ${code}`) + dur
          : m.status === 'error'
            ? p.c('red', `  └ ${code}`) + dur
            : p.c('yellow', `  └ ${m.status}`);
      p.logLine(text);
    },
    exec_approval_request: (p, m) => {
      // The whole call, every argument, control characters shown as escapes (render/call-view.ts).
      const lines = callLines(m.arguments);
      const where = p.c('gray', `(in ${visibleText(m.cwd)})`);
      if (m.tool === 'shell' && lines.length === 1) {
        p.logLine(`${p.c('yellow', '⏸ approval needed:')} ${p.callLine(lines[0]!)} ${where}`);
        return;
      }
      p.logLine(`${p.c('yellow', '⏸ approval needed:')} ${p.c('bold', visibleText(m.tool))} ${where}`);
      for (const line of lines) p.logLine(`  ${p.callLine(line)}`);
    },
    approval_resolved: (p, m) => {
      p.logLine(p.c(m.decision === 'deny' || m.decision === 'abort' ? 'yellow' : 'gray', `  ${DECISION_TEXT[m.decision]}`));
    },
    turn_resumed: (p, m) => {
      p.logLine(p.c('yellow', `↻ turn resumed after a daemon restart or takeover (attempt ${m.attempt})`));
    },
    turn_complete: (p, m) => {
      const tokens = m.usage.input_tokens + m.usage.output_tokens;
      p.logLine(p.c('gray', `── ${turnSummary(m.duration_ms, m.tool_calls, tokens)}`));
    },
    turn_interrupted: (p, m) => {
      p.logLine(p.c('yellow', `── interrupted${m.reason !== 'interrupted' ? `: ${sanitize(m.reason)}` : ''}`));
    },
    turn_failed: (p, m) => {
      p.logLine(p.c('red', `── turn failed: ${m.error.code}: ${sanitize(m.error.message)}`));
    },
    warning: (p, m) => {
      p.logLine(p.c('yellow', `⚠ ${sanitize(m.message)}`));
    },
    model_changed: (p, m) => {
      p.logLine(p.c('gray', `model → ${sanitize(m.route)}`));
    },
    context_compacted: (p, m) => {
      p.logLine(p.c('gray', `── context compacted (${m.reason}): ${formatCount(m.tokens_before)} → ${formatCount(m.tokens_after)} tokens`));
    },
  };

  event(ev: Event): void {
    const type = ev.msg.type;
    if (!Object.hasOwn(PlainPrinter.ON_EVENT, type)) return;
    (PlainPrinter.ON_EVENT[type] as (p: PlainPrinter, m: EventMsg) => void)(this, ev.msg);
  }

  /** End any open line (before exiting). */
  finish(): void {
    this.endOutLine();
    if (!this.logAtLineStart) this.writeLog('\n');
  }
}
