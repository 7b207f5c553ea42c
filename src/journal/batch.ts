/**
 * A `CommittedBatch` from a stored row: the `batch` frame is encoded once from the events
 * JSON exactly as it was written (so every backend replays the same bytes), and the
 * events are parsed only if someone asks (the server only sends `frame`).
 */
import { encodeBatchFrame, type Event } from '../../protocol/index.js';
import type { CommittedBatch } from './journal.js';

export function committedBatch(sessionId: string, sequence: number, committedAt: number, eventsJson: string): CommittedBatch {
  let events: Event[] | undefined;
  return {
    session_id: sessionId,
    sequence,
    committed_at: committedAt,
    get events(): Event[] {
      return (events ??= JSON.parse(eventsJson) as Event[]);
    },
    frame: encodeBatchFrame(sessionId, sequence, committedAt, eventsJson),
  };
}
