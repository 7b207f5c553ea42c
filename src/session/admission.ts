/**
 * Admission of `message` submissions: starting a turn when idle, joining the running turn
 * (steer) or the durable queue, refusing a message past `limits.max_queued_turns`, and
 * answering a message id this session admitted before.
 */
import { titleFromMessage } from '../../protocol/index.js';
import type { Config } from '../config/config.js';
import type { SessionDeps } from './deps.js';
import type { InboxItem } from './inbox.js';
import type { SessionState } from './state.js';
import { startTurn } from './turn.js';
import type { Tx } from './tx.js';

/** Would this message wait in the queue, and is the queue full? */
export function queueIsFull(state: SessionState, config: Config, item: InboxItem): boolean {
  const o = item.submission.op;
  if (o.type !== 'message') return false;
  const waits = state.turn !== null && o.mode !== 'steer';
  return waits && state.queue.length >= config.limits.max_queued_turns;
}

/** The refusal of a message past the queue bound. */
export function queueFullMessage(config: Config): string {
  return `queue full: the session already has ${config.limits.max_queued_turns} queued turns (limits.max_queued_turns)`;
}

/**
 * A session created without a title takes one from its first message (docs/sessions.md):
 * only at the first message, so a title cleared later stays cleared. (A session from before
 * `first_message_seen` existed and still untitled is named by its next message.)
 */
function nameFromFirstMessage(tx: Tx, text: string): void {
  if (tx.state.first_message_seen) return;
  const title = tx.state.title ?? titleFromMessage(text);
  tx.set({ first_message_seen: true, title });
}

/** Admit a message into the running turn (steer) or the queue. */
export function admitMessage(tx: Tx, item: InboxItem): void {
  const { id, op } = item.submission;
  if (op.type !== 'message') return;
  tx.admission = { submission_id: id, onAdmitted: item.onAdmitted, onRejected: item.onRejected };
  nameFromFirstMessage(tx, op.text);
  const turn = tx.state.turn;
  if (turn && op.mode === 'steer') {
    tx.setTurn({ steer: [...turn.steer, op.text] });
    tx.emit({ type: 'user_message', text: op.text, mode: 'steer' }, { submission_id: id });
    if (op.overrides) {
      tx.emit({ type: 'warning', message: 'overrides apply only to a message that starts a turn; ignored for this steer' }, { submission_id: id });
    }
  } else {
    tx.set({ queue: [...tx.state.queue, { submission_id: id, text: op.text, ...(op.overrides && { overrides: op.overrides }) }] });
    tx.emit({ type: 'user_message', text: op.text, mode: 'queued' }, { submission_id: id, turn_id: null });
  }
}

/** Admit a message to an idle session: it starts its turn at once. */
export function admitAndStart(tx: Tx, deps: SessionDeps, item: InboxItem): void {
  const o = item.submission.op;
  if (o.type !== 'message') return;
  tx.admission = { submission_id: item.submission.id, onAdmitted: item.onAdmitted, onRejected: item.onRejected };
  nameFromFirstMessage(tx, o.text);
  tx.emit({ type: 'user_message', text: o.text, mode: 'turn' }, { submission_id: item.submission.id, turn_id: null });
  startTurn(tx, deps, item.submission.id, o.text, o.overrides);
}
