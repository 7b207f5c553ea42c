/**
 * Deleting a session (docs/sessions.md#deleting-sessions), the host's side: which
 * resident sessions belong to the session's tree (itself and its subagent sessions), the
 * `busy` refusal of a running or waiting turn, and `force`'s interrupt of each such turn,
 * waited for until its `turn_interrupted` is committed (bounded).
 */
import { AgentdError } from '../errors.js';
import type { SessionJournal } from '../journal/journal.js';
import type { Session } from './session.js';

/** How long a forced delete waits for an interrupted turn to end before stopping it anyway. */
const INTERRUPT_WAIT_MS = 10_000;
/** Deeper than any subagent chain (limits.max_subagent_depth is far below). */
const MAX_DEPTH = 64;

/** The parent of a session, from its resident state or its stored checkpoint. */
async function parentOf(id: string, sessions: ReadonlyMap<string, Session>, journal: SessionJournal): Promise<string | null> {
  const live = sessions.get(id);
  if (live) return live.state.parent?.session_id ?? null;
  const stored = await journal.loadSession(id);
  if (!stored) return null;
  try {
    return (JSON.parse(stored.checkpoint) as { parent?: { session_id?: string } }).parent?.session_id ?? null;
  } catch {
    return null;
  }
}

/** Resident sessions that are `rootId` or descend from it. */
export async function residentTree(rootId: string, sessions: ReadonlyMap<string, Session>, journal: SessionJournal): Promise<Session[]> {
  const found: Session[] = [];
  for (const session of [...sessions.values()]) {
    let id: string | null = session.id;
    for (let depth = 0; id !== null && depth <= MAX_DEPTH; depth++) {
      if (id === rootId) {
        found.push(session);
        break;
      }
      id = await parentOf(id, sessions, journal);
    }
  }
  return found;
}

/**
 * Refuse `busy` when a session of the tree has a turn running, waiting for approval or
 * queued, unless `force`: then interrupt each such turn and wait until it ended.
 */
export async function settleTurns(rootId: string, tree: readonly Session[], force: boolean): Promise<void> {
  const busy = tree.filter((s) => !s.isQuiet);
  if (busy.length === 0) return;
  if (!force) {
    throw new AgentdError('busy', `session ${rootId} has a running or waiting turn: interrupt it first, or delete with force`);
  }
  await Promise.all(busy.map((s) => interruptAndWait(s)));
}

function interruptAndWait(session: Session): Promise<void> {
  const turn = session.state.turn;
  if (turn) {
    session.submit({ id: `delete.${turn.turn_id}`.slice(0, 128), op: { type: 'interrupt', turn_id: turn.turn_id } });
  }
  return new Promise((resolve) => {
    const done = (): void => {
      clearTimeout(timer);
      unsubscribe();
      stopped();
      resolve();
    };
    const timer = setTimeout(done, INTERRUPT_WAIT_MS);
    const unsubscribe = session.subscribe(() => {
      if (session.state.turn === null) queueMicrotask(done);
    });
    const stopped = session.onStopped(done);
    if (session.state.turn === null) queueMicrotask(done);
  });
}
