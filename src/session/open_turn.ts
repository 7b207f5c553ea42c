/** Reading the journal for recovery: the turn a session left open, found by scanning its batches backwards. */
import { isTurnEnd } from '../../protocol/index.js';
import type { SessionJournal } from '../journal/journal.js';

/** The last turn_started without a terminal event after it, scanning the journal backwards. */
export async function findOpenTurn(
  journal: SessionJournal,
  sessionId: string,
  head: number,
): Promise<{ turn_id: string; submission_id: string | null } | null> {
  const ended = new Set<string>();
  for (let before = head + 1; before > 1; ) {
    const page = await journal.readBefore(sessionId, before, 256);
    if (page.length === 0) break;
    for (let i = page.length - 1; i >= 0; i--) {
      const events = page[i]!.events;
      for (let j = events.length - 1; j >= 0; j--) {
        const e = events[j]!;
        if (isTurnEnd(e.msg)) {
          if (e.turn_id) ended.add(e.turn_id);
        } else if (e.msg.type === 'turn_started') {
          return ended.has(e.msg.turn_id) ? null : { turn_id: e.msg.turn_id, submission_id: e.submission_id };
        }
      }
    }
    before = page[0]!.sequence;
  }
  return null;
}
