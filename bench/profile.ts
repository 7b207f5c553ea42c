/**
 * Summarize a V8 .cpuprofile (from `npm run bench -- --profile`): the functions and files
 * with the most self time, and the heaviest inclusive frames of agentd's own code.
 *
 *   node dist/bench/profile.js bench/profiles/journal_stream.bench.cpuprofile [--top 25] [--filter src/]
 */
import { readFileSync } from 'node:fs';
import { relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { ROOT } from './lib/util.js';

interface Node {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  hitCount?: number;
  children?: number[];
}
interface Profile {
  nodes: Node[];
  samples: number[];
  timeDeltas: number[];
  startTime: number;
  endTime: number;
}

function where(url: string, line: number): string {
  if (!url) return '(native)';
  let path = url.startsWith('file://') ? fileURLToPath(url) : url;
  if (path.startsWith(ROOT)) path = relative(ROOT, path);
  path = path.replace(/^node_modules\//, 'nm/').replace(/^dist\//, '');
  return `${path}:${line + 1}`;
}

function main(): void {
  const args = process.argv.slice(2);
  const file = args.find((a) => !a.startsWith('--'));
  if (!file) throw new Error('usage: profile.js FILE.cpuprofile [--top N] [--filter TEXT]');
  const top = Number(args[args.indexOf('--top') + 1]) || 25;
  const filter = args.includes('--filter') ? args[args.indexOf('--filter') + 1]! : null;
  const p = JSON.parse(readFileSync(file, 'utf8')) as Profile;
  const byId = new Map(p.nodes.map((n) => [n.id, n]));
  const parent = new Map<number, number>();
  for (const n of p.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
  const self = new Map<number, number>();
  for (let i = 0; i < p.samples.length; i++) {
    const id = p.samples[i]!;
    self.set(id, (self.get(id) ?? 0) + (p.timeDeltas[i] ?? 0));
  }
  const total = [...self.values()].reduce((a, b) => a + b, 0);
  const key = (n: Node) => `${n.callFrame.functionName || '(anonymous)'}  ${where(n.callFrame.url, n.callFrame.lineNumber)}`;
  const selfBy = new Map<string, number>();
  const fileBy = new Map<string, number>();
  const inclBy = new Map<string, number>();
  for (const [id, t] of self) {
    const n = byId.get(id)!;
    selfBy.set(key(n), (selfBy.get(key(n)) ?? 0) + t);
    const f = n.callFrame.url ? where(n.callFrame.url, 0).replace(/:1$/, '') : n.callFrame.functionName || '(native)';
    fileBy.set(f, (fileBy.get(f) ?? 0) + t);
    // Inclusive: count each distinct frame once per sample stack.
    const seen = new Set<string>();
    for (let cur: number | undefined = id; cur !== undefined; cur = parent.get(cur)) {
      const k = key(byId.get(cur)!);
      if (seen.has(k)) continue;
      seen.add(k);
      inclBy.set(k, (inclBy.get(k) ?? 0) + t);
    }
  }
  const pct = (t: number) => `${((100 * t) / total).toFixed(1).padStart(5)}%`;
  const ms = (t: number) => `${(t / 1000).toFixed(0).padStart(7)} ms`;
  const show = (title: string, m: Map<string, number>, pred: (k: string) => boolean = () => true) => {
    console.log(`\n${title}`);
    [...m.entries()]
      .filter(([k]) => pred(k) && (!filter || k.includes(filter)))
      .sort((a, b) => b[1] - a[1])
      .slice(0, top)
      .forEach(([k, t]) => console.log(`${ms(t)} ${pct(t)}  ${k}`));
  };
  console.log(`${file}: ${(total / 1000).toFixed(0)} ms sampled`);
  show('self time by function', selfBy);
  show('self time by file', fileBy);
  show('inclusive time, agentd code (src/, protocol/)', inclBy, (k) => /\s(src|protocol)\//.test(k));
}

main();
