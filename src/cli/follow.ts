/**
 * Following one session's live events from a client subcommand (`approve`, `interrupt`,
 * `watch`): attach, hand every event to `onEvent` until it returns an exit code, and end
 * with a typed CliExit when the session is gone or the connection is lost for good.
 * Ctrl-C ends with `sigintCode`. Reconnects (and failover to another address) resume
 * after the last batch seen: the client does that by itself (src/client/subscriptions.ts).
 */
import type { Attached, BatchFrame, Event } from '../../protocol/index.js';
import type { AgentdClient } from '../client/client.js';
import { CliExit, attachFailure } from './exit.js';

export interface FollowOptions {
  /** Batches replayed before the live stream (default 0). */
  replayBatches?: number;
  /** Called for every event in order; a number ends the follow with that exit code. */
  onEvent(batch: BatchFrame, event: Event): number | null;
  /** The exit code of Ctrl-C. */
  sigintCode: number;
  onSigint?(): void;
  /** Connection state changes worth a line on stderr. */
  onNote?(text: string): void;
}

export interface Following {
  /** The attach answer (the session's descriptor at the head). */
  readonly attached: Attached;
  /** Resolves with the exit code; rejects with CliExit. */
  readonly done: Promise<number>;
  /** End early with `code`. */
  end(code: number): void;
  /** Remove every listener (call once done settles). */
  dispose(): void;
}

export async function followSession(client: AgentdClient, sessionId: string, options: FollowOptions): Promise<Following> {
  let settle!: (code: number) => void;
  let fail!: (err: Error) => void;
  const done = new Promise<number>((resolve, reject) => {
    settle = resolve;
    fail = reject;
  });
  const offBatch = client.events.on('batch', (b) => {
    if (b.session_id !== sessionId) return;
    for (const ev of b.events) {
      const code = options.onEvent(b, ev);
      if (code !== null) return settle(code);
    }
  });
  const offState = client.events.on('state', (s) => {
    if (s.kind === 'reconnecting') options.onNote?.(`connection lost (${s.error}); reconnecting…`);
    if (s.kind === 'connected') options.onNote?.(`connected to ${s.url ?? s.server}; resuming`);
    if (s.kind === 'closed') fail(new CliExit(`lost the connection to the daemon: ${s.error ?? 'closed'}`));
  });
  const offError = client.events.on('error', (e) => {
    if (e.code === 'unknown_session') fail(new CliExit(e.message));
  });
  const onSigint = () => {
    options.onSigint?.();
    settle(options.sigintCode);
  };
  process.once('SIGINT', onSigint);
  const dispose = () => {
    process.off('SIGINT', onSigint);
    offBatch();
    offState();
    offError();
  };
  let attached: Attached;
  try {
    attached = await client.attach(sessionId, { replayBatches: options.replayBatches ?? 0 });
  } catch (err) {
    dispose();
    throw attachFailure(err, sessionId);
  }
  // A failure before anyone awaits `done` must not be an unhandled rejection.
  done.catch(() => undefined);
  return { attached, done, end: settle, dispose };
}
