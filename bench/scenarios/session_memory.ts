/**
 * session_memory: heap used per resident idle session. A journal of 10k sessions (each
 * with a few turns of history) is opened by a SessionHost in this process; after a full
 * GC the heap is measured, then all 10k sessions are hydrated with host.open() (no
 * frontend attached; eviction delay set far out so they stay resident), GC, measured again.
 */
import { join } from 'node:path';
import { Journal } from '../../src/journal/journal.js';
import { FixtureWriter, sessionId } from '../lib/fixtures.js';
import { openHost } from '../lib/inproc.js';
import type { Measurement, RunOptions, Scenario } from '../lib/scenario.js';
import { fullGc, now, progress, removeDir, round, tempDir, yieldLoop } from '../lib/util.js';

export const sessionMemory: Scenario = {
  name: 'session_memory',
  what: 'heap per resident idle session, 10k hydrated',
  baselineWhat: 'none (absolute budget)',
  goal: { on: 'value', op: '<=', limit: 30, text: '≤ 30 KiB' },
  async run(options: RunOptions): Promise<Measurement> {
    const n = options.quick ? 2000 : 10_000;
    const dir = tempDir();
    try {
      progress(`building a journal of ${n.toLocaleString('en-US')} sessions`);
      const journal = new Journal(join(dir, 'agentd.db'));
      const writer = new FixtureWriter(journal);
      const ids: string[] = [];
      writer.transaction(() => {
        for (let i = 0; i < n; i++) {
          const id = sessionId(i);
          writer.writeSession(id, dir, { turns: 3, deltasPerTurn: 12, deltasPerBatch: 4 });
          ids.push(id);
        }
      });
      journal.close();

      const host = await openHost(dir, { approval_policy: 'auto', limits: { evict_idle_ms: 3_600_000 } });
      await fullGc();
      const before = process.memoryUsage();
      progress(`hydrating ${n.toLocaleString('en-US')} sessions`);
      const t0 = now();
      for (const id of ids) {
        if (!(await host.open(id))) throw new Error(`session ${id} not found`);
      }
      const hydrateMs = now() - t0;
      await yieldLoop();
      await fullGc();
      const after = process.memoryUsage();
      if (host.residentCount !== n) throw new Error(`${host.residentCount} resident, expected ${n}`);
      const perSession = (after.heapUsed - before.heapUsed) / n / 1024;
      const perSessionExternal = (after.external + after.arrayBuffers - before.external - before.arrayBuffers) / n / 1024;
      const rssPer = (after.rss - before.rss) / n / 1024;
      const checkpointBytes = ((host.journal as Journal).withDatabase((db) => db.prepare('SELECT avg(length(checkpoint)) FROM sessions').pluck().get()) as number) ?? 0;
      await host.close();
      return {
        value: round(perSession, 2),
        unit: 'KiB',
        baseline: null,
        ratio: round(perSession / 30, 2),
        details: {
          sessions: n,
          heap_before_mib: round(before.heapUsed / 2 ** 20, 1),
          heap_after_mib: round(after.heapUsed / 2 ** 20, 1),
          external_per_session_kib: round(perSessionExternal, 2),
          rss_per_session_kib: round(rssPer, 2),
          hydrate_ms_per_session: round(hydrateMs / n, 3),
          checkpoint_json_bytes: Math.round(checkpointBytes),
        },
        note: `ratio = value / 30 KiB; hydration ${(hydrateMs / n).toFixed(3)} ms/session; RSS +${rssPer.toFixed(1)} KiB/session`,
      };
    } finally {
      removeDir(dir);
    }
  },
};
