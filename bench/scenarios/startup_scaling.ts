/**
 * startup_scaling: time from spawning `agentd serve` to its `agentd listening on` line,
 * with a journal of 10k sessions (100 of them with a turn left running, as after a crash:
 * recovered before ready) vs one of 10 sessions (1 with a running turn — the same 1%).
 * Every session has a few turns of history. Each start gets a fresh copy of the fixture
 * (recovery changes the journal); starts alternate between the two, median of each.
 */
import { copyFileSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { LIMITS } from '../../protocol/index.js';
import { Journal } from '../../src/journal/journal.js';
import { startDaemon } from '../lib/daemon.js';
import { FixtureWriter, sessionId } from '../lib/fixtures.js';
import type { Measurement, RunOptions, Scenario } from '../lib/scenario.js';
import { Wire } from '../lib/wire.js';
import { median, now, progress, removeDir, round, sleep, tempDir } from '../lib/util.js';

const CONFIG = { approval_policy: 'auto' };

function buildFixture(dir: string, sessions: number, unfinished: number): void {
  mkdirSync(dir, { recursive: true });
  const journal = new Journal(join(dir, 'agentd.db'));
  const writer = new FixtureWriter(journal);
  const every = Math.floor(sessions / unfinished);
  writer.transaction(() => {
    for (let i = 0; i < sessions; i++) {
      writer.writeSession(sessionId(i), dir, { turns: 3, deltasPerTurn: 12, deltasPerBatch: 4, unfinished: i % every === 0 });
    }
  });
  journal.withDatabase((db) => db.pragma('wal_checkpoint(TRUNCATE)'));
  journal.close();
}

/** Wait until the daemon reports no running session (the recovered turns have ended). */
async function recoveredMs(url: string, t0: number, sessions: number): Promise<number> {
  const wire = await Wire.connect(url);
  try {
    for (;;) {
      let running = 0;
      let before: string | undefined;
      do {
        const page = await wire.request({ type: 'list_sessions', limit: LIMITS.pageMax, ...(before && { before }) });
        const list = page.sessions as Array<{ status: string }>;
        running += list.filter((s) => s.status !== 'idle').length;
        before = (page.next_before as string | null) ?? undefined;
      } while (before);
      if (running === 0) return now() - t0;
      if (now() - t0 > 60_000) throw new Error(`${running} of ${sessions} sessions still running after 60 s`);
      await sleep(20);
    }
  } finally {
    await wire.close();
  }
}

export const startupScaling: Scenario = {
  name: 'startup_scaling',
  what: 'daemon ready with 10k sessions (100 with unfinished turns) vs with 10 (1 unfinished)',
  baselineWhat: 'start-up with 10 sessions',
  goal: { on: 'ratio', op: '<=', limit: 2, text: 'ratio ≤ 2' },
  async run(options: RunOptions): Promise<Measurement> {
    const manyN = options.quick ? 1000 : 10_000;
    const reps = options.quick ? 2 : 5;
    const root = tempDir();
    try {
      progress(`building fixtures: ${manyN.toLocaleString('en-US')} sessions (${manyN / 100} unfinished) and 10 sessions (1 unfinished)`);
      const t0 = now();
      buildFixture(join(root, 'many'), manyN, manyN / 100);
      buildFixture(join(root, 'few'), 10, 1);
      progress(`built in ${((now() - t0) / 1000).toFixed(1)} s`);
      const start = async (kind: 'many' | 'few', rep: number, measureRecovery: boolean) => {
        const dataDir = join(root, `${kind}-${rep}`);
        mkdirSync(dataDir);
        copyFileSync(join(root, kind, 'agentd.db'), join(dataDir, 'agentd.db'));
        const profile = options.profileDir && rep === 0;
        const d = await startDaemon({
          dataDir,
          config: CONFIG,
          ...(profile && { nodeArgs: ['--cpu-prof', `--cpu-prof-dir=${options.profileDir}`, `--cpu-prof-name=startup_scaling.${kind}.daemon.cpuprofile`] }),
        });
        const spawnedAt = now() - d.readyMs;
        const recovered = measureRecovery ? await recoveredMs(d.url, spawnedAt, kind === 'many' ? manyN : 10) : NaN;
        await d.stop();
        removeDir(dataDir);
        return { ready: d.readyMs, recovered };
      };
      // A throw-away start first: warms the OS file cache and node's compile cache.
      await start('few', 99, false);
      const many: number[] = [];
      const few: number[] = [];
      const recMany: number[] = [];
      const recFew: number[] = [];
      for (let i = 0; i < reps; i++) {
        progress(`start ${i + 1}/${reps} of each`);
        const order: Array<'many' | 'few'> = i % 2 === 0 ? ['many', 'few'] : ['few', 'many'];
        for (const kind of order) {
          const r = await start(kind, i, i === 0);
          (kind === 'many' ? many : few).push(r.ready);
          if (i === 0) (kind === 'many' ? recMany : recFew).push(r.recovered);
        }
      }
      const value = median(many);
      const baseline = median(few);
      return {
        value: round(value, 1),
        unit: 'ms',
        baseline: round(baseline, 1),
        ratio: round(value / baseline, 2),
        details: {
          sessions: manyN,
          unfinished: manyN / 100,
          reps,
          many_all_recovered_ms: round(recMany[0] ?? NaN, 1),
          few_all_recovered_ms: round(recFew[0] ?? NaN, 1),
        },
        note: `spawn → listening, median of ${reps}; all recovered turns ended ${(recMany[0] ?? NaN).toFixed(0)} ms vs ${(recFew[0] ?? NaN).toFixed(0)} ms after spawn`,
      };
    } finally {
      removeDir(root);
    }
  },
};
