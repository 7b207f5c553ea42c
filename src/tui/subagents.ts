/**
 * Following subagents from the parent's view: which children the parent's transcript
 * shows running, a one-line summary of what a child is doing (from the child's own
 * transcript), and writing that line into the parent's `delegate` block. Pure; the
 * controller attaches to the children and keeps their transcripts.
 */
import type { ExecApprovalRequestMsg } from '../../protocol/index.js';
import { describeCall } from '../render/tool-call.js';
import type { ToolItem } from './items.js';
import type { TranscriptState } from './transcript.js';

/** A child the parent's view follows: its transcript and the approval answered from here. */
export interface ChildView {
  transcript: TranscriptState;
  answeredApproval: string | null;
}

/** Child session ids of the parent's delegate calls still running. */
export function runningChildren(parent: TranscriptState): string[] {
  const out: string[] = [];
  for (const it of parent.items) {
    if (it.kind === 'tool' && it.subagent?.status === 'running' && it.status === 'running') out.push(it.subagent.sessionId);
  }
  return out;
}

const oneLine = (text: string, max = 120) => {
  const line = text.trim().split('\n').pop() ?? '';
  return line.length > max ? `${line.slice(0, max - 1)}…` : line;
};

/** What the child is doing now, in one line. */
export function childProgress(child: TranscriptState): string | null {
  const pending = child.info.pendingApproval;
  if (pending) return `waiting for approval: ${pending.tool} ${oneLine(describeCall(pending.tool, pending.arguments))} — answer here (y/a/n)`;
  for (let i = child.items.length - 1; i >= 0; i--) {
    const it = child.items[i]!;
    switch (it.kind) {
      case 'agent':
        if (it.text.trim() !== '') return oneLine(it.text);
        continue;
      case 'tool':
        return `${it.tool} ${oneLine(describeCall(it.tool, it.args))}: ${it.status}`;
      case 'turn_end':
        return it.outcome === 'complete' ? 'done' : `${it.outcome}${it.reason ? `: ${oneLine(it.reason)}` : ''}`;
      case 'user':
        return `working on: ${oneLine(it.text)}`;
      case 'notice':
        continue;
    }
  }
  return null;
}

/** The parent's transcript with the delegate block of `childId` showing `progress`. */
export function withChildProgress(parent: TranscriptState, childId: string, progress: string | null): TranscriptState {
  const idx = parent.items.findIndex((it) => it.kind === 'tool' && it.subagent?.sessionId === childId);
  if (idx < 0) return parent;
  const it = parent.items[idx] as ToolItem;
  if (!it.subagent || it.subagent.progress === progress) return parent;
  const items = parent.items.slice();
  items[idx] = { ...it, subagent: { ...it.subagent, progress } };
  return { ...parent, items };
}

/** The first approval a followed child waits for that was not answered from here. */
export function childApproval(children: Readonly<Record<string, ChildView>>): { sessionId: string; request: ExecApprovalRequestMsg } | null {
  for (const [sessionId, child] of Object.entries(children)) {
    const request = child.transcript.info.pendingApproval;
    if (request && child.answeredApproval !== request.approval_id) return { sessionId, request };
  }
  return null;
}
