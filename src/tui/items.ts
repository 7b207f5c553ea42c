/**
 * The transcript's display items — one per user message, agent reply, tool call, turn
 * end or notice — the local notes shown among them, and the bounded tail kept of a tool
 * call's output.
 */
import type { ApprovalDecision, OutputStream, SubagentStatus, ToolCallStatus, UserMessageMode } from '../../protocol/index.js';

export type ToolStatus = 'awaiting_approval' | 'running' | ToolCallStatus;

export interface OutputChunk {
  stream: OutputStream;
  text: string;
}

export type Item =
  | { kind: 'user'; key: string; seq: number; text: string; mode: UserMessageMode }
  | { kind: 'agent'; key: string; seq: number; text: string; streaming: boolean }
  /** The model's thinking (agent_reasoning_delta), shown dimmed; collapsed once it ends. */
  | { kind: 'reasoning'; key: string; seq: number; text: string; streaming: boolean }
  | {
      kind: 'tool';
      key: string;
      seq: number;
      callId: string;
      tool: string;
      args: unknown;
      output: OutputChunk[];
      /** Characters dropped from the front of a very long output. */
      truncated: number;
      status: ToolStatus;
      exitCode: number | null;
      durationMs: number | null;
      /** The approval decision, if the call asked for one. */
      approval: ApprovalDecision | 'pending' | null;
      cwd: string | null;
      /** A `delegate` call: its child session, how it stands, and a line of its live progress. */
      subagent?: SubagentView;
    }
  | {
      kind: 'turn_end';
      key: string;
      seq: number;
      outcome: 'complete' | 'interrupted' | 'failed';
      reason: string | null;
      durationMs: number | null;
      modelCalls: number | null;
      toolCalls: number | null;
      tokens: number | null;
    }
  | { kind: 'notice'; key: string; seq: number; tone: NoticeTone; text: string; detail?: string };

export interface SubagentView {
  sessionId: string;
  status: 'running' | SubagentStatus;
  /** What the child is doing now (from its own batches, while the TUI follows it). */
  progress: string | null;
}

export type NoticeTone = 'info' | 'success' | 'warning' | 'error';

/** A note shown in the transcript that is not in the journal (errors, /sessions output…). */
export interface LocalNote {
  key: string;
  /** Shown after every item created by a batch with sequence ≤ this. */
  afterSeq: number;
  tone: NoticeTone;
  text: string;
  detail?: string;
}
export type ItemKind = Item['kind'];
export type ToolItem = Extract<Item, { kind: 'tool' }>;
export type TurnEndItem = Extract<Item, { kind: 'turn_end' }>;
export type ReasoningItem = Extract<Item, { kind: 'reasoning' }>;

/** Output kept per tool call (the tail); older text is counted in `truncated`. */
export const MAX_TOOL_OUTPUT_CHARS = 64 * 1024;

/** Append output to a (mutable) tool item, merging same-stream chunks and keeping the tail. */
export function appendOutput(it: ToolItem, stream: OutputStream, text: string): void {
  if (text === '') return;
  const last = it.output[it.output.length - 1];
  if (last && last.stream === stream) last.text += text;
  else it.output.push({ stream, text });
  let total = 0;
  for (const c of it.output) total += c.text.length;
  while (total > MAX_TOOL_OUTPUT_CHARS && it.output.length > 0) {
    const head = it.output[0]!;
    const excess = total - MAX_TOOL_OUTPUT_CHARS;
    if (head.text.length <= excess) {
      it.output.shift();
      it.truncated += head.text.length;
      total -= head.text.length;
    } else {
      head.text = head.text.slice(excess);
      it.truncated += excess;
      total -= excess;
    }
  }
}
