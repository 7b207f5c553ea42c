/**
 * Journal fixtures written straight into SQLite (one transaction), not through the
 * runtime: sessions with a realistic history (turns of user message, streamed deltas in
 * small batches, reply, usage, turn end), their transcript and admissions, and optionally
 * a turn left running (as if the daemon had died mid-stream).
 */
import type { Event, EventMsg } from '../../protocol/index.js';
import { Journal } from '../../src/journal/journal.js';
import { newSessionState, newTurn, ZERO_USAGE, type ActiveTurn, type SessionState } from '../../src/session/state.js';

export interface HistoryShape {
  /** Completed turns. */
  turns: number;
  /** agent_message_delta events per turn. */
  deltasPerTurn: number;
  /** Deltas per batch (group commit under a real model's pace holds only a few). */
  deltasPerBatch: number;
  /** Leave one more turn open (running, mid-stream): the session has unfinished work. */
  unfinished?: boolean;
}

/** Events of a completed turn of `shape` (5 + deltasPerTurn). */
export function eventsPerTurn(shape: HistoryShape): number {
  return shape.deltasPerTurn + 5;
}

const DELTA = 'lorem ip'; // 8 characters, like the scripted model's deltas

export function sessionId(i: number, tag = 'bench'): string {
  return `s_${tag}${String(i).padStart(10, '0')}`;
}

export function initialState(id: string, cwd: string, at: number): SessionState {
  return newSessionState({
    session_id: id,
    cwd,
    approval_policy: 'auto',
    model: { route: 'scripted', model: 'scripted', reasoning_effort: null, context_window: null },
    title: `bench session ${id}`,
    at,
  });
}

/** Writes sessions with history into a journal, all inside the caller's transaction. */
export class FixtureWriter {
  private readonly insertSession;
  private readonly insertBatch;
  private readonly insertTranscript;
  private readonly insertAdmission;
  private readonly updateSession;

  constructor(readonly journal: Journal) {
    const db = journal.withDatabase((d) => d);
    this.insertSession = db.prepare(
      'INSERT INTO sessions (session_id, created_at, updated_at, head_sequence, unfinished, checkpoint) VALUES (?, ?, ?, 0, 0, ?)',
    );
    this.insertBatch = db.prepare('INSERT INTO batches (session_id, sequence, committed_at, events) VALUES (?, ?, ?, ?)');
    this.insertTranscript = db.prepare('INSERT INTO transcript (session_id, idx, item) VALUES (?, ?, ?)');
    this.insertAdmission = db.prepare('INSERT INTO admissions (session_id, submission_id, sequence) VALUES (?, ?, ?)');
    this.updateSession = db.prepare(
      'UPDATE sessions SET head_sequence = ?, updated_at = ?, unfinished = ?, checkpoint = ? WHERE session_id = ?',
    );
  }

  /** Run `fn` in one transaction (much faster than one per batch). */
  transaction(fn: () => void): void {
    this.journal.withDatabase((db) => db.transaction(fn)());
  }

  /** One session with `shape` history; returns its number of events and batches. */
  writeSession(id: string, cwd: string, shape: HistoryShape, at = Date.now()): { events: number; batches: number } {
    let state = initialState(id, cwd, at);
    this.insertSession.run(id, at, at, JSON.stringify(state));
    let seq = 0;
    let events = 0;
    let transcript = 0;
    let usage = ZERO_USAGE;
    const batch = (list: Event[]): void => {
      this.insertBatch.run(id, ++seq, at, JSON.stringify(list));
      events += list.length;
    };
    const ev = (msg: EventMsg, turnId: string | null, submissionId: string | null = null): Event => ({
      submission_id: submissionId,
      turn_id: turnId,
      ts: at,
      msg,
    });
    const addTranscript = (item: unknown): void => {
      this.insertTranscript.run(id, transcript++, JSON.stringify(item));
    };
    batch([
      ev(
        {
          type: 'session_configured',
          session_id: id,
          model: state.model,
          cwd,
          approval_policy: state.approval_policy,
          title: state.title,
        },
        null,
      ),
    ]);
    const reply = DELTA.repeat(shape.deltasPerTurn);
    const startTurn = (t: number): { turnId: string; sub: string } => {
      const sub = `m${t}`;
      const turnId = `turn_${id.slice(2)}_${t}`;
      batch([ev({ type: 'user_message', text: `question ${t}`, mode: 'turn' }, null, sub), ev({ type: 'turn_started', turn_id: turnId }, turnId, sub)]);
      this.insertAdmission.run(id, sub, seq);
      addTranscript({ role: 'user', text: `question ${t}` });
      return { turnId, sub };
    };
    const streamDeltas = (turnId: string, n: number): void => {
      for (let d = 0; d < n; d += shape.deltasPerBatch) {
        const list: Event[] = [];
        for (let k = d; k < Math.min(n, d + shape.deltasPerBatch); k++) {
          list.push(ev({ type: 'agent_message_delta', delta: DELTA }, turnId));
        }
        batch(list);
      }
    };
    for (let t = 1; t <= shape.turns; t++) {
      const { turnId, sub } = startTurn(t);
      streamDeltas(turnId, shape.deltasPerTurn);
      const step = { input_tokens: 10 * t, output_tokens: 2 * shape.deltasPerTurn };
      usage = { input_tokens: usage.input_tokens + step.input_tokens, output_tokens: usage.output_tokens + step.output_tokens };
      batch([
        ev({ type: 'agent_message', text: reply }, turnId),
        ev({ type: 'token_usage', usage: step, total: usage }, turnId),
        ev(
          {
            type: 'turn_complete',
            last_message: reply,
            model_calls: 1,
            tool_calls: 0,
            failed_tool_calls: 0,
            usage: step,
            duration_ms: 1234,
          },
          turnId,
          sub,
        ),
      ]);
      addTranscript({ role: 'assistant', text: reply });
    }
    let turn: ActiveTurn | null = null;
    if (shape.unfinished) {
      const t = shape.turns + 1;
      const { turnId, sub } = startTurn(t);
      streamDeltas(turnId, Math.min(4, shape.deltasPerTurn));
      turn = newTurn(turnId, sub, at);
    }
    state = {
      ...state,
      last_ingress_seq: shape.turns + (shape.unfinished ? 1 : 0),
      turn,
      usage_total: usage,
      transcript_length: transcript,
    };
    this.updateSession.run(seq, at, turn ? 1 : 0, JSON.stringify(state), id);
    return { events, batches: seq };
  }
}
