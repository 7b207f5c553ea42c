/** A real Journal on a temporary SQLite file for one test, closed and removed after it. */
import { afterEach } from 'vitest';
import { join } from 'node:path';
import { Journal } from '../../src/journal/journal.js';
import { cleanup, tempDir } from './session.js';

/** Registers the clean-up; `open()` makes the test's journal (one per test). */
export function useTempJournal(): { open(): Journal; dir(): string } {
  let dir: string | undefined;
  let journal: Journal | undefined;
  afterEach(() => {
    journal?.close();
    if (dir) cleanup(dir);
    dir = journal = undefined;
  });
  return {
    open() {
      dir = tempDir();
      journal = new Journal(join(dir, 'agentd.db'));
      return journal;
    },
    dir: () => dir!,
  };
}
