/**
 * Plain-text rendering of events for `agentd send`: the agent's replies go to `out`
 * (stdout, so `reply=$(agentd send …)` captures just the answer); everything else —
 * the echoed message, tool calls and their output, approvals, the turn's end — goes to
 * `log` (stderr). Colours only when asked for (a TTY and no NO_COLOR).
 */
import type { Event } from '../../protocol/index.js';
import { formatDuration, turnSummary } from './format.js';
import { sanitize } from './sanitize.js';
import { describeCall } from './tool-call.js';

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

  /** A note from the command itself (not an event). */
  note(text: string, color: Color = 'gray'): void {
    this.logLine(this.c(color, text));
  }

  event(ev: Event): void {
    const m = ev.msg;
    switch (m.type) {
      case 'user_message':
        this.logLine(`${this.c('cyan', '›')} ${this.c('bold', sanitize(m.text))}${m.mode !== 'turn' ? this.c('gray', ` (${m.mode})`) : ''}`);
        return;
      case 'agent_message_delta':
        if (!this.logAtLineStart) this.writeLog('\n');
        this.streamed = true;
        this.writeOut(sanitize(m.delta));
        return;
      case 'agent_message':
        if (!this.streamed && m.text !== '') this.writeOut(sanitize(m.text));
        this.endOutLine();
        this.streamed = false;
        return;
      case 'tool_call_begin': {
        this.endOutLine();
        this.streamed = false;
        const desc = sanitize(describeCall(m.tool, m.arguments));
        this.logLine(m.tool === 'shell' ? `${this.c('gray', '$')} ${this.c('bold', desc)}` : `${this.c('bold', m.tool)} ${desc}`);
        return;
      }
      case 'exec_output_delta':
        this.streamedOutput.add(m.call_id);
        this.writeOutput(m.chunk, m.stream === 'stderr');
        return;
      case 'tool_call_end': {
        if (!this.streamedOutput.has(m.call_id) && m.output !== '') this.writeOutput(m.output, false);
        this.streamedOutput.delete(m.call_id);
        const dur = this.c('gray', ` (${formatDuration(m.duration_ms)})`);
        const code = m.exit_code !== undefined && m.exit_code !== null ? `exit ${m.exit_code}` : m.status;
        const text =
          m.status === 'ok'
            ? this.c('green', `  └ ${code}`) + dur
            : m.status === 'error'
              ? this.c('red', `  └ ${code}`) + dur
              : this.c('yellow', `  └ ${m.status}`);
        this.logLine(text);
        return;
      }
      case 'exec_approval_request': {
        const desc = sanitize(describeCall(m.tool, m.arguments));
        this.logLine(`${this.c('yellow', '⏸ approval needed:')} ${m.tool === 'shell' ? '$ ' : `${m.tool} `}${this.c('bold', desc)} ${this.c('gray', `(in ${m.cwd})`)}`);
        return;
      }
      case 'approval_resolved':
        this.logLine(this.c(m.decision === 'deny' || m.decision === 'abort' ? 'yellow' : 'gray', `  ${DECISION_TEXT[m.decision]}`));
        return;
      case 'turn_resumed':
        this.logLine(this.c('yellow', `↻ turn resumed after a daemon restart (attempt ${m.attempt})`));
        return;
      case 'turn_complete': {
        const tokens = m.usage.input_tokens + m.usage.output_tokens;
        this.logLine(this.c('gray', `── ${turnSummary(m.duration_ms, m.tool_calls, tokens)}`));
        return;
      }
      case 'turn_interrupted':
        this.logLine(this.c('yellow', `── interrupted${m.reason !== 'interrupted' ? `: ${m.reason}` : ''}`));
        return;
      case 'turn_failed':
        this.logLine(this.c('red', `── turn failed: ${m.error.code}: ${m.error.message}`));
        return;
      case 'warning':
        this.logLine(this.c('yellow', `⚠ ${sanitize(m.message)}`));
        return;
      case 'model_changed':
        this.logLine(this.c('gray', `model → ${m.route}`));
        return;
      default:
        return;
    }
  }

  /** End any open line (before exiting). */
  finish(): void {
    this.endOutLine();
    if (!this.logAtLineStart) this.writeLog('\n');
  }
}
