/**
 * Which events of a session belong to the turn of one submission (`agentd send`): those
 * carrying its submission id, then those of the turn it started; and the exit code the
 * turn's end means.
 */
import type { Event } from '../../protocol/index.js';
import { EXIT } from './exit.js';

export class TurnWatch {
  /** The turn the submission started, once an event of it names it. */
  private turnId: string | null = null;

  constructor(private readonly submissionId: string) {}

  /** Whether `ev` is part of the submission's turn (learns the turn id from the first one). */
  owns(ev: Event): boolean {
    const ours = ev.submission_id === this.submissionId || (this.turnId !== null && ev.turn_id === this.turnId);
    if (ours && this.turnId === null && ev.turn_id !== null) this.turnId = ev.turn_id;
    return ours;
  }

  /** The exit code when `ev` ends the turn (0 complete, 1 failed / interrupted), else null. */
  exitCode(ev: Event): number | null {
    if (this.turnId === null || ev.turn_id !== this.turnId) return null;
    if (ev.msg.type === 'turn_complete') return EXIT.ok;
    if (ev.msg.type === 'turn_interrupted' || ev.msg.type === 'turn_failed') return EXIT.turnFailed;
    return null;
  }
}
