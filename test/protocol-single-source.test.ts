/**
 * protocol/ is the single source of wire types, codes and limits: src/ and bench/ import
 * them and restate none. This scans their TypeScript for the usual restatements — a
 * protocol enum written out as a string union or array, the identifier regex, close-code
 * literals — so one that slips back in (for instance in a merge) is caught.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import * as protocol from '../protocol/index.js';

const root = fileURLToPath(new URL('..', import.meta.url));

function sourceFiles(dir: string): string[] {
  const out: string[] = [];
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) out.push(...sourceFiles(path));
    else if (/\.tsx?$/.test(entry.name)) out.push(path);
  }
  return out;
}

/** Code without comments (roughly: prose may name a code or a value). */
const stripComments = (text: string) => text.replace(/\/\*[\s\S]*?\*\//g, ' ').replace(/(^|[^:'"`])\/\/.*$/gm, '$1');

/** Every file's code with runs of whitespace collapsed, so a union split over lines still matches. */
const files = ['src', 'bench'].flatMap((d) => sourceFiles(join(root, d))).map((path) => ({
  name: relative(root, path),
  text: stripComments(readFileSync(path, 'utf8')).replace(/\s+/g, ' '),
}));

/** Each enum of the protocol (2+ values) as a TypeScript union and as an array literal. */
const enums = Object.entries(protocol)
  .filter((e): e is [string, z.ZodEnum] => e[1] instanceof z.ZodEnum && e[1].options.length > 1)
  .map(([name, schema]) => {
    const quoted = schema.options.map((o) => `'${String(o)}'`);
    return { name, forms: [quoted.join(' | '), `[${quoted.join(', ')}]`] };
  });

describe('protocol/ is the single source', () => {
  it('finds the protocol enums to look for', () => {
    const names = enums.map((e) => e.name);
    for (const n of ['ErrorCodeSchema', 'ApprovalPolicySchema', 'SessionStatusSchema', 'AdmissionOutcomeSchema', 'TurnFailureCodeSchema', 'EnqueueRefusalCodeSchema']) {
      expect(names).toContain(n);
    }
    expect(files.length).toBeGreaterThan(50);
  });

  it('no protocol enum is restated as a string union or array', () => {
    const found: string[] = [];
    for (const f of files) {
      for (const e of enums) for (const form of e.forms) if (f.text.includes(form)) found.push(`${f.name}: ${form} (import ${e.name.replace(/Schema$/, '')} / ${e.name})`);
    }
    expect(found).toEqual([]);
  });

  it('the identifier pattern and the close codes are imported, not written out', () => {
    const found: string[] = [];
    for (const f of files) {
      if (/A-Za-z0-9\._:-\]\{/.test(f.text)) found.push(`${f.name}: identifier regex (import IDENTIFIER_PATTERN)`);
      for (const m of f.text.matchAll(/\b(?:ws|socket)\.close\(\s*(\d+)/g)) found.push(`${f.name}: close code ${m[1]} (import CLOSE_CODES)`);
      for (const code of Object.values(protocol.CLOSE_CODES).filter((c) => c >= 4000)) {
        if (new RegExp(`\\b${code}\\b`).test(f.text)) found.push(`${f.name}: close code ${code} (import CLOSE_CODES)`);
      }
    }
    expect(found).toEqual([]);
  });
});
