/**
 * replay_scaling: `attach` replaying the last 100 batches, from the attach frame to the
 * 100th batch received, over a real daemon — a session with 1M events vs one with 1k
 * events, both in the same journal and with the same shape of history (turns of 96 deltas
 * committed 4 per batch, as group commit does under a real model's pace).
 *
 * The first attach of each session is cold (it hydrates the session) and reported apart;
 * the value is the median of warm re-attaches, alternating between the two sessions.
 */
import { join } from 'node:path';
import { Journal } from '../../src/journal/journal.js';
import { startDaemon } from '../lib/daemon.js';
import { FixtureWriter, eventsPerTurn, sessionId, type HistoryShape } from '../lib/fixtures.js';
import type { Measurement, RunOptions, Scenario } from '../lib/scenario.js';
import { Wire, type Frame } from '../lib/wire.js';
import { median, now, progress, removeDir, round, tempDir } from '../lib/util.js';

const REPLAY = 100;

async function attachReplay(wire: Wire, session: string): Promise<number> {
  let got = 0;
  const done = new Promise<void>((resolve) => {
    wire.onFrame = (f: Frame) => {
      if (f.type === 'batch' && f.session_id === session && ++got === REPLAY) resolve();
    };
  });
  const t0 = now();
  const attached = wire.request({ type: 'attach', session_id: session, replay_batches: REPLAY });
  await attached;
  await done;
  const dt = now() - t0;
  wire.onFrame = null;
  await wire.request({ type: 'detach', session_id: session });
  return dt;
}

export const replayScaling: Scenario = {
  name: 'replay_scaling',
  what: 'attach replaying 100 batches: session with 1M events vs one with 1k (real daemon)',
  baselineWhat: 'the same attach of a 1k-event session',
  goal: { on: 'ratio', op: '<=', limit: 1.5, text: 'ratio ≤ 1.5' },
  async run(options: RunOptions): Promise<Measurement> {
    const bigEvents = options.quick ? 100_000 : 1_000_000;
    const smallEvents = 1_000;
    const reps = options.quick ? 10 : 40;
    const shapeFor = (events: number): HistoryShape => {
      const shape = { turns: 0, deltasPerTurn: 96, deltasPerBatch: 4 };
      return { ...shape, turns: Math.max(1, Math.round(events / eventsPerTurn(shape))) };
    };
    const dir = tempDir();
    try {
      progress(`building the journal: ${bigEvents.toLocaleString('en-US')}-event session + ${smallEvents.toLocaleString('en-US')}-event session`);
      const t0 = now();
      const journal = new Journal(join(dir, 'agentd.db'));
      const writer = new FixtureWriter(journal);
      const big = sessionId(1, 'big');
      const small = sessionId(2, 'small');
      const warm = sessionId(3, 'warm');
      let bigInfo = { events: 0, batches: 0 };
      let smallInfo = { events: 0, batches: 0 };
      writer.transaction(() => {
        bigInfo = writer.writeSession(big, dir, shapeFor(bigEvents));
        smallInfo = writer.writeSession(small, dir, shapeFor(smallEvents));
        writer.writeSession(warm, dir, shapeFor(smallEvents));
      });
      journal.withDatabase((db) => db.pragma('wal_checkpoint(TRUNCATE)'));
      journal.close();
      progress(
        `built in ${((now() - t0) / 1000).toFixed(1)} s: ${bigInfo.events.toLocaleString('en-US')} events / ${bigInfo.batches.toLocaleString('en-US')} batches vs ${smallInfo.events} / ${smallInfo.batches}`,
      );

      const daemon = await startDaemon({
        dataDir: dir,
        config: { approval_policy: 'auto' },
        ...(options.profileDir && { nodeArgs: ['--cpu-prof', `--cpu-prof-dir=${options.profileDir}`, '--cpu-prof-name=replay_scaling.daemon.cpuprofile'] }),
      });
      try {
        const wire = await Wire.connect(daemon.url);
        // JIT warm-up on a third session, so the first cold attach measured is not the first ever.
        for (let i = 0; i < 5; i++) await attachReplay(wire, warm);
        progress('cold attaches (hydration included)');
        const coldBig = await attachReplay(wire, big);
        const coldSmall = await attachReplay(wire, small);
        progress(`${reps} warm attaches of each, alternating`);
        const bigMs: number[] = [];
        const smallMs: number[] = [];
        for (let i = 0; i < reps; i++) {
          if (i % 2 === 0) {
            bigMs.push(await attachReplay(wire, big));
            smallMs.push(await attachReplay(wire, small));
          } else {
            smallMs.push(await attachReplay(wire, small));
            bigMs.push(await attachReplay(wire, big));
          }
        }
        await wire.close();
        const value = median(bigMs);
        const baseline = median(smallMs);
        return {
          value: round(value, 3),
          unit: 'ms',
          baseline: round(baseline, 3),
          ratio: round(value / baseline, 2),
          details: {
            big_events: bigInfo.events,
            big_batches: bigInfo.batches,
            small_events: smallInfo.events,
            small_batches: smallInfo.batches,
            cold_big_ms: round(coldBig, 3),
            cold_small_ms: round(coldSmall, 3),
            cold_ratio: round(coldBig / coldSmall, 2),
            reps,
          },
          note: `median warm attach; cold (hydrating) attach ${coldBig.toFixed(2)} ms vs ${coldSmall.toFixed(2)} ms (×${(coldBig / coldSmall).toFixed(2)})`,
        };
      } finally {
        await daemon.stop();
      }
    } finally {
      removeDir(dir);
    }
  },
};
