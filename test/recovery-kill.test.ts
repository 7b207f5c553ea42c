/**
 * Restart recovery after a real `kill -9` of a spawned daemon (docs/architecture.md): nothing
 * admitted is lost, interrupted turns are resumed (or interrupted by policy), a started
 * shell command never runs twice, pending approvals survive.
 */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, test } from 'vitest';
import { connect, type Frame, type TestClient } from './helpers/client.js';
import { startDaemon, tempDataDir, type Daemon } from './helpers/daemon.js';
import { cleanup } from './helpers/session.js';
import { checkJournal, settle, TERMINAL } from './helpers/settle.js';


let daemons: Daemon[] = [];
let clients: TestClient[] = [];
let dirs: string[] = [];

afterEach(async () => {
  for (const c of clients) await c.close().catch(() => {});
  for (const d of daemons) await d.stop('SIGKILL').catch(() => {});
  for (const dir of dirs) cleanup(dir);
  daemons = [];
  clients = [];
  dirs = [];
});

async function boot(dataDir: string, config: object): Promise<{ d: Daemon; c: TestClient }> {
  const d = await startDaemon({ dataDir, config });
  daemons.push(d);
  const c = await connect(d);
  clients.push(c);
  return { d, c };
}

async function pollUntil(pred: () => boolean, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!pred()) {
    if (Date.now() > deadline) throw new Error('timed out');
    await new Promise((r) => setTimeout(r, 10));
  }
}

/** A daemon on a fresh data dir with one session attached; `text` (if any) submitted as `long`. */
async function bootWithSession(config: object, text?: string) {
  const dir = tempDataDir();
  dirs.push(dir);
  const { d, c } = await boot(dir, config);
  const s = (await c.createSession({ cwd: dir })).session_id as string;
  await c.attach(s);
  if (text) await c.submitMessage(s, text, 'long');
  return { dir, d, c, s };
}

/** Wait for the running `!sleep` turn's first delta, then kill -9 and start again. */
async function killMidStream(dir: string, config: object, d: Daemon, c: TestClient, s: string) {
  await c.waitForEvent(s, (m) => m.type === 'agent_message_delta');
  await kill9(d);
  return boot(dir, config);
}

async function kill9(d: Daemon): Promise<void> {
  d.proc.kill('SIGKILL');
  await d.exited;
}

describe('kill -9 recovery', () => {
  test('mid-stream with a queued message behind it: the turn resumes, then the queued turn runs', async () => {
    const config = { approval_policy: 'auto' };
    const first = await bootWithSession(config, '!sleep 1500');
    const s = first.s;
    await first.c.submitMessage(s, 'behind', 'behind');
    await first.c.until(() => first.c.events(s).find((m) => m.type === 'user_message' && m.text === 'behind'));
    const { c } = await killMidStream(first.dir, config, first.d, first.c, s);
    const events = checkJournal(await settle(c, s));
    expect(events.filter((e) => e.msg.type === 'turn_resumed').map((e) => e.msg.attempt)).toEqual([1]);
    const done = events.filter((e) => e.msg.type === 'turn_complete');
    expect(done.map((e) => [e.submission_id, e.msg.last_message])).toEqual([
      ['long', 'slept'],
      ['behind', 'echo: behind'],
    ]);
  });

  test('awaiting approval: the request survives, approving after restart runs the command once', async () => {
    const dir = tempDataDir();
    dirs.push(dir);
    const config = { approval_policy: 'ask' };
    let { d, c } = await boot(dir, config);
    const s = (await c.createSession({ cwd: dir, approval_policy: 'ask' })).session_id as string;
    await c.attach(s);
    await c.submitMessage(s, '!sh echo ran >> approved.log', 'ask-1');
    const req = await c.waitForEvent(s, (m) => m.type === 'exec_approval_request');
    await kill9(d);
    ({ d, c } = await boot(dir, config));
    const attached = await c.attach(s, { after_sequence: 0 });
    expect(attached.session.status).toBe('awaiting_approval');
    expect(attached.session.pending_approval).toEqual(req);
    await c.submit(s, 'yes', { type: 'exec_approval', id: req.approval_id, decision: 'approve' });
    await c.waitTurnEnd(s, 'ask-1');
    expect(readFileSync(join(dir, 'approved.log'), 'utf8')).toBe('ran\n');
    checkJournal(c.batches(s));
  });

  test('a running shell command is never run a second time', async () => {
    const dir = tempDataDir();
    dirs.push(dir);
    const config = { approval_policy: 'auto' };
    let { d, c } = await boot(dir, config);
    const s = (await c.createSession({ cwd: dir })).session_id as string;
    await c.attach(s);
    await c.submitMessage(s, '!sh echo start >> runs.log; sleep 3; echo end >> runs.log', 'sh-1');
    await pollUntil(() => existsSync(join(dir, 'runs.log')));
    await kill9(d);
    ({ d, c } = await boot(dir, config));
    const events = checkJournal(await settle(c, s));
    const end = events.find((e) => e.msg.type === "tool_call_end")!;
    expect(end.msg.status).toBe('error');
    expect(end.msg.output).toMatch(/outcome is unknown/);
    expect(events.find((e) => e.msg.type === 'turn_complete')!.msg.last_message).toMatch(/did not complete: the daemon restarted/);
    // The orphaned first run may still finish; nothing started it again.
    await new Promise((r) => setTimeout(r, 3500));
    expect(readFileSync(join(dir, 'runs.log'), 'utf8').match(/start/g)).toHaveLength(1);
  });

  test('policy interrupt ends the turn as interrupted by restart', async () => {
    const config = { approval_policy: 'auto', recovery: { policy: 'interrupt' } };
    const { dir, d, c, s } = await bootWithSession(config, '!sleep 2000');
    const after = await killMidStream(dir, config, d, c, s);
    const events = checkJournal(await settle(after.c, s));
    expect(events.filter((e) => TERMINAL.includes(e.msg.type)).map((e) => e.msg)).toEqual([
      { type: 'turn_interrupted', reason: 'interrupted by restart' },
    ]);
  });

  test('after max_recovery_attempts the turn is interrupted by restart', async () => {
    const config = { approval_policy: 'auto', recovery: { max_recovery_attempts: 1 } };
    const first = await bootWithSession(config, '!sleep 3000');
    let { d, c } = await killMidStream(first.dir, config, first.d, first.c, first.s);
    await c.attach(first.s, { after_sequence: 0 });
    await c.waitForEvent(first.s, (m) => m.type === 'turn_resumed');
    await kill9(d);
    ({ d, c } = await boot(first.dir, config));
    const events = checkJournal(await settle(c, first.s));
    expect(events.filter((e) => e.msg.type === 'turn_resumed').map((e) => e.msg.attempt)).toEqual([1]);
    expect(events.filter((e) => TERMINAL.includes(e.msg.type)).map((e) => e.msg)).toEqual([
      { type: 'turn_interrupted', reason: 'interrupted by restart' },
    ]);
  });

  test('during admission: every admitted message survives; retries never duplicate', async () => {
    const dir = tempDataDir();
    dirs.push(dir);
    const config = { approval_policy: 'auto', limits: { inbox_capacity: 1000 } };
    let { d, c } = await boot(dir, config);
    const s = (await c.createSession({ cwd: dir })).session_id as string;
    const ids = Array.from({ length: 200 }, (_, i) => `adm-${i}`);
    for (const id of ids) c.send({ type: 'submit', session_id: s, submission: { id, op: { type: 'message', text: id } } });
    // Kill as soon as some, but not all, are admitted.
    await c.until(() => (c.frames.filter((f) => f.type === 'admitted').length >= 5 ? true : undefined), 10_000);
    await kill9(d);
    const admitted = c.frames.filter((f) => f.type === 'admitted').map((f) => f.submission_id as string);
    ({ d, c } = await boot(dir, config));
    // The client retries everything with the same ids.
    for (const id of ids) c.send({ type: 'submit', session_id: s, submission: { id, op: { type: 'message', text: id } } });
    await c.until(() => (c.frames.filter((f) => f.type === 'admitted').length === ids.length ? true : undefined), 20_000);
    const outcomes = new Map(c.frames.filter((f) => f.type === 'admitted').map((f) => [f.submission_id, f.outcome]));
    for (const id of admitted) expect(outcomes.get(id)).toBe('already_accepted');
    const events = checkJournal(await settle(c, s, 60_000));
    const users = events.filter((e) => e.msg.type === 'user_message').map((e) => e.submission_id);
    expect(new Set(users).size).toBe(users.length);
    expect(users.sort()).toEqual([...ids].sort());
  }, 90_000);
});

describe('kill -9 loop', () => {
  test('20 kills at random moments over a stream of turns keep every invariant', async () => {
    const dir = tempDataDir();
    dirs.push(dir);
    const config = { approval_policy: 'auto', limits: { inbox_capacity: 1000 } };
    let { d, c } = await boot(dir, config);
    const s = (await c.createSession({ cwd: dir })).session_id as string;
    const texts = ['hello', '!sleep 120', '!sh echo x', 'more text to echo back', '!fail'];
    const seen = new Map<number, string>(); // every batch any client received, by sequence
    const admitted = new Set<string>();
    const sent: string[] = [];
    let n = 0;
    for (let round = 0; round < 20; round++) {
      await c.attach(s, { after_sequence: 0 });
      for (let i = 0; i < 6; i++) {
        const id = `loop-${n}`;
        const text = texts[n++ % texts.length]!;
        sent.push(id);
        c.send({ type: 'submit', session_id: s, submission: { id, op: { type: 'message', text } } });
      }
      await new Promise((r) => setTimeout(r, 30 + Math.floor(Math.random() * 300)));
      for (const b of c.batches(s)) seen.set(b.sequence as number, JSON.stringify(b.events));
      for (const f of c.frames) if (f.type === 'admitted') admitted.add(f.submission_id as string);
      await kill9(d);
      ({ d, c } = await boot(dir, config));
    }
    const events = checkJournal(await settle(c, s, 60_000));
    const final = new Map(c.batches(s).map((b) => [b.sequence as number, JSON.stringify(b.events)]));
    // Nothing a client received is missing or changed.
    for (const [seq, json] of seen) expect(final.get(seq)).toBe(json);
    // Everything acknowledged is there, exactly once; nothing is there twice.
    const users = events.filter((e) => e.msg.type === 'user_message').map((e) => e.submission_id as string);
    expect(new Set(users).size).toBe(users.length);
    for (const id of admitted) expect(users).toContain(id);
    for (const id of users) expect(sent).toContain(id);
  }, 120_000);
});
