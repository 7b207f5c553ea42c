/**
 * `npm run bench` — runs every scenario (each in its own child process, started with
 * --expose-gc), prints a table against the goals of issue #7 and writes
 * bench/results.json. See docs/performance.md.
 *
 *   node dist/bench/run.js [--only a,b] [--quick] [--profile] [--out FILE]
 *
 *   --only      run only these scenarios (results.json keeps the others' last results)
 *   --quick     small sizes, for developing the benchmarks (writes nothing by default)
 *   --profile   CPU profiles (node --cpu-prof) of each scenario and of the daemons it
 *               starts, into bench/profiles/
 *   --out FILE  write the results there instead of bench/results.json
 */
import { fork } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { cpus, loadavg } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { meetsGoal, ScenarioSkipped, type Measurement, type RunOptions, type Scenario } from './lib/scenario.js';
import { bold, dim, fmt, green, red, renderMarkdown, renderTable, type Row } from './lib/table.js';
import { ROOT } from './lib/util.js';
import { SCENARIOS } from './scenarios/index.js';

interface Args {
  only: string[] | null;
  quick: boolean;
  profile: boolean;
  out: string | null;
  child: string | null;
  markdown: boolean;
}

function parseArgs(argv: string[]): Args {
  const args: Args = { only: null, quick: false, profile: false, out: null, child: null, markdown: false };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i]!;
    const value = (): string => {
      const eq = a.indexOf('=');
      if (eq >= 0) return a.slice(eq + 1);
      const v = argv[++i];
      if (v === undefined) throw new Error(`${a} needs a value`);
      return v;
    };
    if (a === '--quick') args.quick = true;
    else if (a === '--profile') args.profile = true;
    else if (a === '--markdown') args.markdown = true;
    else if (a.startsWith('--only')) args.only = value().split(',').map((s) => s.trim()).filter(Boolean);
    else if (a.startsWith('--out')) args.out = value();
    else if (a.startsWith('--child')) args.child = value();
    else throw new Error(`unknown argument ${a} (see bench/run.ts)`);
  }
  return args;
}

const PROFILE_DIR = join(ROOT, 'bench', 'profiles');

/** Child mode: run one scenario and send its measurement to the parent. */
async function runChild(name: string, options: RunOptions): Promise<void> {
  const scenario = SCENARIOS.find((s) => s.name === name);
  if (!scenario) throw new Error(`no scenario ${name}`);
  let message: object;
  try {
    message = { type: 'result', measurement: await scenario.run(options) };
  } catch (err) {
    if (!(err instanceof ScenarioSkipped)) throw err;
    message = { type: 'skipped', reason: err.reason };
  }
  await new Promise<void>((resolve) => process.send!(message, () => resolve()));
  process.exit(0);
}

function runInChild(scenario: Scenario, args: Args, onProgress: (msg: string) => void): Promise<Measurement> {
  const execArgv = ['--expose-gc', '--max-old-space-size=4096'];
  if (args.profile) {
    mkdirSync(PROFILE_DIR, { recursive: true });
    execArgv.push('--cpu-prof', `--cpu-prof-dir=${PROFILE_DIR}`, `--cpu-prof-name=${scenario.name}.bench.cpuprofile`);
  }
  const childArgs = ['--child', scenario.name, ...(args.quick ? ['--quick'] : []), ...(args.profile ? ['--profile'] : [])];
  const child = fork(fileURLToPath(import.meta.url), childArgs, { execArgv, stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
  return new Promise((resolve, reject) => {
    let result: Measurement | null = null;
    let skipped: string | null = null;
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error('timed out after 10 minutes'));
    }, 600_000);
    child.on('message', (msg: { type: string; message?: string; measurement?: Measurement; reason?: string }) => {
      if (msg.type === 'progress') onProgress(msg.message!);
      else if (msg.type === 'result') result = msg.measurement!;
      else if (msg.type === 'skipped') skipped = msg.reason!;
    });
    child.on('exit', (code, signal) => {
      clearTimeout(timer);
      if (result) resolve(result);
      else if (skipped !== null) reject(new ScenarioSkipped(skipped));
      else reject(new Error(`scenario process exited with ${signal ?? code}`));
    });
  });
}

async function main(): Promise<void> {
  const args = parseArgs(process.argv.slice(2));
  if (args.child) {
    return runChild(args.child, { quick: args.quick, profileDir: args.profile ? PROFILE_DIR : null });
  }
  const selected = args.only ? SCENARIOS.filter((s) => args.only!.includes(s.name)) : SCENARIOS;
  const unknown = (args.only ?? []).filter((n) => !SCENARIOS.some((s) => s.name === n));
  if (unknown.length) throw new Error(`unknown scenario ${unknown.join(', ')}; known: ${SCENARIOS.map((s) => s.name).join(', ')}`);

  const cpu = cpus();
  const load = () => loadavg().map((l) => l.toFixed(2)).join(' ');
  console.log(
    bold('agentd benchmarks') +
      dim(` · node ${process.version} · ${cpu.length} × ${cpu[0]?.model.trim() ?? 'cpu'} · load ${load()}`) +
      (args.quick ? red(' · QUICK: sizes reduced, not comparable') : ''),
  );
  console.log('');
  const rows: Row[] = [];
  const started = Date.now();
  for (const [i, s] of selected.entries()) {
    console.log(`${bold(`[${i + 1}/${selected.length}] ${s.name}`)} ${dim(`— ${s.what}`)}`);
    const t0 = Date.now();
    const loadBefore = loadavg()[0]!;
    const secs = () => ((Date.now() - t0) / 1000).toFixed(1).padStart(5) + 's';
    try {
      const m = await runInChild(s, args, (msg) => console.log(dim(`  ${secs()}  ${msg}`)));
      // The machine's load around the run (other processes skew every number).
      m.details.load_avg_1m = Number(Math.max(loadBefore, loadavg()[0]!).toFixed(2));
      const pass = meetsGoal(s.goal, m);
      rows.push({ name: s.name, goal: s.goal, m, pass });
      const base = m.baseline === null ? '' : ` vs ${fmt(m.baseline)} ${m.unit}`;
      console.log(`  ${secs()}  ${pass ? green('✓') : red('✗')} ${fmt(m.value)} ${m.unit}${base} → ratio ${fmt(m.ratio)} (goal ${s.goal.text})`);
    } catch (err) {
      if (err instanceof ScenarioSkipped) {
        rows.push({ name: s.name, goal: s.goal, m: null, pass: false, skipped: err.reason });
        console.log(`  ${secs()}  ${dim(`– skipped: ${err.reason}`)}`);
        console.log('');
        continue;
      }
      const message = (err as Error).message;
      rows.push({ name: s.name, goal: s.goal, m: null, pass: false, error: message });
      console.log(`  ${secs()}  ${red('✗ failed:')} ${message}`);
    }
    console.log('');
  }
  console.log(renderTable(rows));
  console.log('');
  const passed = rows.filter((r) => r.pass).length;
  const ran = rows.filter((r) => r.skipped === undefined).length;
  const skippedNote = ran < rows.length ? ` (${rows.length - ran} skipped)` : '';
  console.log(
    `${passed === ran ? green(`${passed}/${ran} goals met${skippedNote}`) : red(`${passed}/${ran} goals met${skippedNote}`)} ` +
      dim(`in ${((Date.now() - started) / 1000).toFixed(0)} s · load ${load()}`),
  );
  if (args.markdown) console.log('\n' + renderMarkdown(rows));

  const out = args.out ?? (args.quick ? null : join(ROOT, 'bench', 'results.json'));
  if (out) {
    let results: Record<string, unknown> = {};
    if (args.only && existsSync(out)) {
      try {
        results = JSON.parse(readFileSync(out, 'utf8')) as Record<string, unknown>;
      } catch {
        results = {};
      }
    }
    for (const r of rows) {
      if (r.skipped !== undefined) {
        // A scenario that cannot run here keeps its last measured result, marked.
        const last = results[r.name];
        results[r.name] = { ...(typeof last === 'object' && last), skipped: r.skipped };
        continue;
      }
      if (!r.m) {
        results[r.name] = { value: null, unit: null, baseline: null, ratio: null, goal: r.goal.text, pass: false, error: r.error };
        continue;
      }
      results[r.name] = {
        value: r.m.value,
        unit: r.m.unit,
        baseline: r.m.baseline,
        ratio: r.m.ratio,
        goal: r.goal.text,
        pass: r.pass,
        details: r.m.details,
      };
    }
    // Keep the scenario order stable in the file.
    const ordered: Record<string, unknown> = {};
    for (const s of SCENARIOS) if (s.name in results) ordered[s.name] = results[s.name];
    writeFileSync(out, JSON.stringify(ordered, null, 2) + '\n');
    console.log(dim(`results written to ${out}`));
  }
}

main().catch((err: unknown) => {
  console.error(err instanceof Error ? err.stack : err);
  process.exit(1);
});
