/**
 * The layer rule (docs/architecture.md "The layer rule"): every import of every .ts/.tsx
 * file in src/ and protocol/ points down the layer table, no folder imports itself through
 * others, no file-level import cycle, and the packages that belong to one layer stay there.
 * Each failure names the offending import.
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..');

/**
 * Layer → the layers it may import (besides itself). `*` = anything. A layer is a folder
 * of src/ (or protocol/); a file directly in src/ is a layer of its own name.
 */
const LAYERS: Record<string, readonly string[]> = {
  protocol: [],
  errors: ['protocol'],
  'data-dir': [],
  model: ['protocol', 'errors'],
  config: ['protocol', 'errors', 'model'],
  tools: ['protocol', 'errors', 'config', 'model'],
  mcp: ['protocol', 'errors', 'config', 'model', 'tools'],
  journal: ['protocol', 'errors'],
  session: ['protocol', 'errors', 'config', 'model', 'tools', 'mcp', 'journal'],
  server: ['protocol', 'errors', 'config', 'model', 'tools', 'mcp', 'journal', 'session'],
  cluster: ['protocol', 'errors', 'config', 'model', 'tools', 'mcp', 'journal', 'session'],
  telemetry: ['protocol', 'errors', 'config', 'model', 'tools', 'mcp', 'journal', 'session'],
  notify: ['protocol', 'errors', 'config', 'journal', 'session', 'render'],
  client: ['protocol', 'data-dir'],
  render: ['protocol'],
  tui: ['protocol', 'client', 'render'],
  acp: ['protocol', 'client'],
  cli: ['*'],
};

/** Packages only one layer may import: a CLI parser in the client library, Ink in the daemon… */
const PACKAGE_HOME: Record<string, string> = {
  commander: 'cli',
  ink: 'tui',
  react: 'tui',
  'better-sqlite3': 'journal',
  pg: 'journal',
  '@agentclientprotocol/sdk': 'acp',
  'prom-client': 'telemetry',
  '@opentelemetry/api': 'telemetry',
  '@opentelemetry/sdk-trace-base': 'telemetry',
  '@opentelemetry/resources': 'telemetry',
  '@opentelemetry/semantic-conventions': 'telemetry',
  '@opentelemetry/exporter-trace-otlp-http': 'telemetry',
};

interface Import {
  from: string;
  specifier: string;
  /** The resolved file (relative to ROOT) for a relative specifier. */
  to?: string;
}

function sourceFiles(dir: string): string[] {
  const out: string[] = [];
  for (const name of readdirSync(dir)) {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) out.push(...sourceFiles(path));
    else if (/\.tsx?$/.test(name) && !name.endsWith('.d.ts')) out.push(path);
  }
  return out;
}

function resolveImport(file: string, specifier: string): string {
  const base = resolve(dirname(file), specifier).replace(/\.js$/, '');
  for (const ext of ['.ts', '.tsx', '/index.ts']) {
    try {
      if (statSync(base + ext).isFile()) return relative(ROOT, base + ext);
    } catch {
      /* try the next */
    }
  }
  return relative(ROOT, base);
}

/** Every import, export-from and dynamic import() of a file (type-only ones too). */
function importsOf(file: string): Import[] {
  const info = ts.preProcessFile(readFileSync(file, 'utf8'), true, true);
  const from = relative(ROOT, file);
  return info.importedFiles.map(({ fileName }) =>
    fileName.startsWith('.') ? { from, specifier: fileName, to: resolveImport(file, fileName) } : { from, specifier: fileName },
  );
}

/** `src/tui/app.tsx` → `tui`; `src/errors.ts` → `errors`; `protocol/x.ts` → `protocol`. */
function layerOf(path: string): string {
  const parts = path.split('/');
  if (parts[0] === 'protocol') return 'protocol';
  if (parts[0] === 'src') return parts.length === 2 ? parts[1]!.replace(/\.tsx?$/, '') : parts[1]!;
  return parts[0]!;
}

const packageName = (specifier: string) =>
  specifier.startsWith('@') ? specifier.split('/').slice(0, 2).join('/') : specifier.split('/')[0]!;

const FILES = [...sourceFiles(join(ROOT, 'src')), ...sourceFiles(join(ROOT, 'protocol'))];
const IMPORTS = FILES.flatMap(importsOf);
const show = (i: Import) => `${i.from} imports '${i.specifier}'`;

/** The cycles of a directed graph (one per strongly connected component with 2+ nodes or a self-loop). */
function cycles(graph: Map<string, Set<string>>): string[][] {
  let index = 0;
  const idx = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const out: string[][] = [];
  const visit = (v: string) => {
    idx.set(v, index);
    low.set(v, index++);
    stack.push(v);
    onStack.add(v);
    for (const w of graph.get(v) ?? []) {
      if (!idx.has(w)) {
        visit(w);
        low.set(v, Math.min(low.get(v)!, low.get(w)!));
      } else if (onStack.has(w)) low.set(v, Math.min(low.get(v)!, idx.get(w)!));
    }
    if (low.get(v) === idx.get(v)) {
      const scc: string[] = [];
      let w: string;
      do {
        w = stack.pop()!;
        onStack.delete(w);
        scc.push(w);
      } while (w !== v);
      if (scc.length > 1 || graph.get(v)?.has(v)) out.push(scc.sort());
    }
  };
  for (const v of [...graph.keys()].sort()) if (!idx.has(v)) visit(v);
  return out;
}

/** The edges of a graph that stay inside one of its cycles, for the failure message. */
function cycleEdges(edges: Import[], key: (path: string) => string, members: string[]): string[] {
  const set = new Set(members);
  return edges.filter((i) => i.to && key(i.from) !== key(i.to) && set.has(key(i.from)) && set.has(key(i.to))).map(show);
}

describe('the layer rule', () => {
  it('finds the source files and their imports', () => {
    expect(FILES.length).toBeGreaterThan(50);
    expect(IMPORTS.some((i) => i.from === 'src/cli/main.ts' && i.specifier === './attach.js')).toBe(true);
  });

  it('the layer table itself goes one way', () => {
    const graph = new Map(Object.entries(LAYERS).map(([k, v]) => [k, new Set(v.filter((d) => d !== '*'))]));
    expect(cycles(graph)).toEqual([]);
  });

  it('every folder of src/ is a layer of the table', () => {
    const unknown = [...new Set(FILES.map((f) => layerOf(relative(ROOT, f))))].filter((l) => !(l in LAYERS));
    expect(unknown, 'add the new layer to LAYERS here and to docs/architecture.md').toEqual([]);
  });

  it('no import points up or sideways', () => {
    const bad = IMPORTS.filter((i) => {
      if (!i.to) return false;
      const from = layerOf(i.from);
      const to = layerOf(i.to);
      const allowed = LAYERS[from] ?? [];
      return from !== to && !allowed.includes('*') && !allowed.includes(to);
    }).map((i) => `${show(i)} (${layerOf(i.from)} may import: ${(LAYERS[layerOf(i.from)] ?? []).join(', ') || 'nothing of src'})`);
    expect(bad).toEqual([]);
  });

  it('packages stay in their layer', () => {
    const bad = IMPORTS.filter((i) => {
      if (i.to || i.specifier.startsWith('node:')) return false;
      const home = PACKAGE_HOME[packageName(i.specifier)];
      const from = layerOf(i.from);
      return home !== undefined && from !== home && !(LAYERS[from] ?? []).includes('*');
    }).map((i) => `${show(i)} (only ${PACKAGE_HOME[packageName(i.specifier)]} may)`);
    expect(bad).toEqual([]);
  });

  it('no folder cycles', () => {
    const folderOf = (path: string) => dirname(path);
    const graph = new Map<string, Set<string>>();
    for (const i of IMPORTS) {
      if (!i.to) continue;
      const a = folderOf(i.from);
      const b = folderOf(i.to);
      if (!graph.has(a)) graph.set(a, new Set());
      if (a !== b) graph.get(a)!.add(b);
    }
    const found = cycles(graph).map((c) => `${c.join(' ↔ ')}: ${cycleEdges(IMPORTS, folderOf, c).join('; ')}`);
    expect(found).toEqual([]);
  });

  it('no file-level import cycles', () => {
    const graph = new Map<string, Set<string>>();
    for (const i of IMPORTS) {
      if (!i.to) continue;
      if (!graph.has(i.from)) graph.set(i.from, new Set());
      graph.get(i.from)!.add(i.to);
    }
    const found = cycles(graph).map((c) => `${c.join(' ↔ ')}: ${cycleEdges(IMPORTS, (p) => p, c).join('; ')}`);
    expect(found).toEqual([]);
  });

  it('the TUI controller and what it reaches hold no view code', () => {
    const VIEW = /^src\/tui\/(.*\.tsx|layout\.ts|text\.ts|theme\.ts)$/;
    const reached = new Set<string>();
    const walk = (file: string) => {
      for (const i of IMPORTS) {
        if (i.from !== file || !i.to?.startsWith('src/tui/') || reached.has(i.to)) continue;
        reached.add(i.to);
        walk(i.to);
      }
    };
    walk('src/tui/controller.ts');
    const bad = IMPORTS.filter((i) => (i.from === 'src/tui/controller.ts' || reached.has(i.from)) && i.to && VIEW.test(i.to)).map(show);
    expect(bad).toEqual([]);
  });

  it('the client library neither exits the process nor parses command lines', () => {
    const bad = FILES.map((f) => relative(ROOT, f))
      .filter((f) => ['client', 'render', 'tui', 'acp'].includes(layerOf(f)))
      .filter((f) => /\bprocess\.exit\b|process\.exitCode/.test(readFileSync(join(ROOT, f), 'utf8')));
    expect(bad).toEqual([]);
  });
});
