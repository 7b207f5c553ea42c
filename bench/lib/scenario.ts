/** What a benchmark scenario is and what it reports. */

export interface RunOptions {
  /** Smaller sizes, for developing the benchmarks (results are not comparable). */
  quick: boolean;
  /** When set, daemons started by the scenario write CPU profiles here. */
  profileDir: string | null;
}

export interface Goal {
  /** What the goal is checked on. */
  on: 'ratio' | 'value';
  op: '>=' | '<=';
  limit: number;
  /** As written in results.json, e.g. "ratio ≥ 0.5". */
  text: string;
}

export interface Measurement {
  value: number;
  unit: string;
  /** The same-run baseline, in `unit` (null when the scenario has none). */
  baseline: number | null;
  ratio: number;
  /** Secondary numbers, kept in results.json under `details`. */
  details: Record<string, number | string | boolean | null>;
  /** One short line shown under the table. */
  note?: string;
}

export interface Scenario {
  name: string;
  /** One line: what is measured. */
  what: string;
  /** What `baseline` is. */
  baselineWhat: string;
  goal: Goal;
  run(options: RunOptions): Promise<Measurement>;
}

/**
 * Thrown by `run` when the scenario cannot run here (e.g. PostgreSQL is not installed):
 * the runner reports it as skipped, not failed.
 */
export class ScenarioSkipped extends Error {
  constructor(readonly reason: string) {
    super(`skipped: ${reason}`);
    this.name = 'ScenarioSkipped';
  }
}

export function meetsGoal(goal: Goal, m: Pick<Measurement, 'value' | 'ratio'>): boolean {
  const x = goal.on === 'ratio' ? m.ratio : m.value;
  if (!Number.isFinite(x)) return false;
  return goal.op === '>=' ? x >= goal.limit : x <= goal.limit;
}
