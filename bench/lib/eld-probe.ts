/**
 * Event-loop delay of a benchmarked process, from inside it: preloaded with
 * `node --import dist/bench/lib/eld-probe.js …`, so the daemon and the raw ceiling program
 * are measured unchanged. It keeps a `monitorEventLoopDelay` histogram (10 ms sampling);
 * on SIGUSR2 it writes the histogram since the previous signal to `$AGENTD_BENCH_ELD_FILE`
 * as JSON `{seq, p50_ms, p99_ms, max_ms, mean_ms}` (through a rename, so a reader never
 * sees half a file) and starts a new one. The first signal of a measured window resets,
 * the second reads (many_sessions).
 */
import { renameSync, writeFileSync } from 'node:fs';
import { monitorEventLoopDelay } from 'node:perf_hooks';

const file = process.env.AGENTD_BENCH_ELD_FILE;
if (file) {
  const histogram = monitorEventLoopDelay({ resolution: 10 });
  histogram.enable();
  let seq = 0;
  const ms = (ns: number) => Math.round(ns / 1e4) / 100;
  process.on('SIGUSR2', () => {
    seq++;
    const out = { seq, p50_ms: ms(histogram.percentile(50)), p99_ms: ms(histogram.percentile(99)), max_ms: ms(histogram.max), mean_ms: ms(histogram.mean) };
    writeFileSync(`${file}.tmp`, JSON.stringify(out));
    renameSync(`${file}.tmp`, file);
    histogram.reset();
  });
}
