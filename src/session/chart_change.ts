/**
 * How the chart's actions are written: `change(fn)` runs `fn` on a Tx over the current
 * state and emits its Change as a `change` effect (the Session hands it to the Recorder);
 * `stream(fn)` does the same for the streaming hot path through `context.streamed`;
 * `sub` / `op` read the submission of an event. Shared by machine.ts and chart_context.ts.
 */
import { assign, enqueueActions } from 'xstate';
import type { SessionContext, SessionEffect, SessionEvent } from './chart_types.js';
import { Tx } from './tx.js';

export type Ev<T extends SessionEvent['type']> = Extract<SessionEvent, { type: T }>;

/** The chart's typed `enqueueActions` (effects and assigns, no guards or child actions). */
export const effects = enqueueActions<SessionContext, SessionEvent, undefined, SessionEvent, never, never, never, never, SessionEffect>;

/** What an action does on a Tx over the current state; what it returns is assigned too. */
type TxAction<E> = (tx: Tx, ctx: SessionContext, event: E) => Partial<SessionContext> | void;

/** Run `fn` on a Tx over the context's state; `changed`: it emitted, appended or admitted something, or moved the state. */
function runTx<E>(context: SessionContext, event: SessionEvent, fn: TxAction<E>) {
  const tx = new Tx(context.state);
  const extra = fn(tx, context, event as E);
  return { tx, extra, changed: tx.changed || tx.state !== context.state };
}

/** An action that runs a change on a Tx; its result is assigned and emitted as a `change` effect. */
export function change<E extends SessionEvent = SessionEvent>(fn: TxAction<E>) {
  return effects(({ context, event, enqueue }) => {
    const { tx, extra, changed } = runTx(context, event, fn);
    // A change that changed nothing (e.g. no steer to drain) leaves the snapshot alone.
    if (!changed && extra === undefined) return;
    enqueue.assign({ ...extra, state: tx.state });
    if (changed) enqueue.emit({ type: 'change', change: tx.toChange() });
  });
}

/**
 * A streaming action (model deltas, thinking, tool output: hundreds of events a second):
 * the same Tx, but its Change is assigned to `context.streamed` instead of emitted, and the
 * Session hands each new one to the Recorder — when it sees the snapshot, or before it
 * carries out an effect of the same transition, whichever is first. Its transition is
 * targetless and runs this action alone, so its change is the first of its macrostep and
 * nothing starts a child in between (test/session-machine.test.ts checks both).
 *
 * Why not an emitted effect: a plain `assign` per chunk of deltas is cheaper than
 * `enqueueActions` + `emit`, and XState's effect path keeps each event (and its delta
 * strings) reachable through young-generation collections until the next full one —
 * measured, docs/performance.md "Streaming against d4e4671".
 */
export function stream<E extends SessionEvent = SessionEvent>(fn: TxAction<E>) {
  return assign<SessionContext, SessionEvent, undefined, SessionEvent, never>(({ context, event }) => {
    const { tx, extra, changed } = runTx(context, event, fn);
    if (!changed) return extra ?? {};
    return { ...extra, state: tx.state, streamed: tx.toChange() };
  });
}

export const sub = (e: SessionEvent) => e as Ev<'submission'>;
export const op = (e: SessionEvent) => sub(e).item.submission.op;
