/**
 * Model-based test of the session actor and inbox (fast-check commands): random
 * interleavings of messages, steers, interrupts, duplicates, set_model and status ops,
 * checked against the invariants every frontend relies on.
 */
import fc from 'fast-check';
import { expect, test } from 'vitest';
import type { Event } from '../protocol/index.js';
import type { Session } from '../src/session/session.js';
import { cleanup, openHost, Watcher } from './helpers/session.js';

interface Model {
  sent: string[]; // fresh message ids, in ingress order
  accepted: string[]; // ids the session acknowledged accepted
  duplicates: number;
}
interface Real {
  s: Session;
  w: Watcher;
  outcomes: Map<string, string[]>;
  n: number;
}

const texts = fc.constantFrom('hi', '!sleep 30', '!fail', '!sh true', 'steer-ish');

class SendMessage implements fc.AsyncCommand<Model, Real> {
  constructor(readonly text: string, readonly mode: 'queue' | 'steer') {}
  check = () => true;
  async run(m: Model, r: Real) {
    const id = `m${++r.n}`;
    const res = r.s.submit({ id, op: { type: 'message', text: this.text, mode: this.mode } }, (o) =>
      r.outcomes.set(id, [...(r.outcomes.get(id) ?? []), o]),
    );
    if (res.ok) m.sent.push(id);
    else expect(res.code).toBe('busy');
  }
  toString = () => `message(${this.text}, ${this.mode})`;
}

class Duplicate implements fc.AsyncCommand<Model, Real> {
  check = (m: Readonly<Model>) => m.sent.length > 0;
  async run(m: Model, r: Real) {
    const id = m.sent[0]!;
    const res = r.s.submit({ id, op: { type: 'message', text: 'again' } }, (o) => r.outcomes.set(id, [...(r.outcomes.get(id) ?? []), o]));
    if (res.ok) m.duplicates++;
  }
  toString = () => 'duplicate';
}

class Interrupt implements fc.AsyncCommand<Model, Real> {
  check = () => true;
  async run(_m: Model, r: Real) {
    r.s.submit({ id: `i${++r.n}`, op: { type: 'interrupt', turn_id: r.s.descriptor().active_turn_id ?? 'turn_none' } });
  }
  toString = () => 'interrupt';
}

class Other implements fc.AsyncCommand<Model, Real> {
  constructor(readonly kind: 'set_model' | 'status') {}
  check = () => true;
  async run(_m: Model, r: Real) {
    const op =
      this.kind === 'set_model'
        ? ({ type: 'set_model', route: r.n % 2 ? 'alt' : 'scripted' } as const)
        : ({ type: 'capability_command', capability: 'session', command: 'status' } as const);
    r.s.submit({ id: `o${++r.n}`, op });
  }
  toString = () => this.kind;
}

class Pause implements fc.AsyncCommand<Model, Real> {
  constructor(readonly ms: number) {}
  check = () => true;
  async run() {
    await new Promise((res) => setTimeout(res, this.ms));
  }
  toString = () => `pause(${this.ms})`;
}

const commands = [
  fc.tuple(texts, fc.constantFrom('queue' as const, 'steer' as const)).map(([t, mode]) => new SendMessage(t, mode)),
  fc.constant(new Duplicate()),
  fc.constant(new Interrupt()),
  fc.constantFrom('set_model' as const, 'status' as const).map((k) => new Other(k)),
  fc.integer({ min: 0, max: 40 }).map((ms) => new Pause(ms)),
];

function checkInvariants(events: Event[], model: Model, real: Real, sequences: number[]) {
  // Gap-free sequences from 1.
  expect(sequences).toEqual(sequences.map((_, i) => i + 1));
  // Every turn has exactly one terminal event, after its start.
  const open = new Set<string>();
  for (const e of events) {
    if (e.msg.type === 'turn_started') open.add(e.msg.turn_id);
    if (['turn_complete', 'turn_interrupted', 'turn_failed'].includes(e.msg.type)) {
      expect(open.delete(e.turn_id!)).toBe(true);
    }
  }
  expect(open.size).toBe(0);
  // Every fresh message was admitted exactly once and answered accepted once (plus already_accepted for retries).
  const users = events.filter((e) => e.msg.type === 'user_message').map((e) => e.submission_id);
  expect(users).toEqual(model.sent.filter((id, i) => model.sent.indexOf(id) === i));
  for (const id of users) expect(real.outcomes.get(id!)?.[0]).toBe('accepted');
  const already = [...real.outcomes.values()].flat().filter((o) => o === 'already_accepted').length;
  expect(already).toBe(model.duplicates);
  // Turns start in admission order (steers join a running turn instead).
  const starts = events.filter((e) => e.msg.type === 'turn_started').map((e) => e.submission_id);
  const queued = events
    .filter((e) => e.msg.type === 'user_message' && (e.msg as { mode: string }).mode !== 'steer')
    .map((e) => e.submission_id);
  expect(starts).toEqual(queued);
}

test('random op interleavings keep the journal and turn invariants', async () => {
  await fc.assert(
    fc.asyncProperty(fc.commands(commands, { maxCommands: 25 }), async (cmds) => {
      const h = await openHost({ approval_policy: 'auto', models: { routes: { alt: { provider: 'scripted' } } }, limits: { inbox_capacity: 8 } });
      try {
        const d = await h.host.create({ cwd: h.dir });
        const s = (await h.host.open(d.session_id))!;
        const real: Real = { s, w: new Watcher(s), outcomes: new Map(), n: 0 };
        const model: Model = { sent: [], accepted: [], duplicates: 0 };
        await fc.asyncModelRun(() => ({ model, real }), cmds);
        // Let everything finish.
        const deadline = Date.now() + 10_000;
        while (!s.isQuiet && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
        await new Promise((r) => setTimeout(r, 20));
        expect(s.isQuiet).toBe(true);
        const batches = (await h.host.readAfter(d.session_id, 0, 100_000));
        checkInvariants(batches.flatMap((b) => b.events), model, real, batches.map((b) => b.sequence));
      } finally {
        await h.close();
        cleanup(h.dir);
      }
    }),
    { numRuns: 25 },
  );
}, 120_000);
