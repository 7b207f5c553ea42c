/**
 * The scripting commands end to end: `agentd new`, `send --new`, `approve`, `interrupt`
 * and `watch` (bin/agentd.js) against a real daemon with the scripted model, each exit
 * code checked — 0 done, 2 usage / connection / unknown session, 3 nothing pending.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connect, type TestClient } from './helpers/client.js';
import { BIN, ROOT, runAgentd, startDaemon, type Daemon, type RunResult } from './helpers/daemon.js';
import { waitFor } from './helpers/tui.js';

let daemon: Daemon;
let client: TestClient;
let scratch: string;

beforeAll(async () => {
  daemon = await startDaemon();
  client = await connect(daemon);
  scratch = mkdtempSync(join(tmpdir(), 'agentd-cli-scripting-'));
});

afterAll(async () => {
  await client?.close();
  await daemon?.stop();
  rmSync(scratch, { recursive: true, force: true });
});

const agentd = (...args: string[]): Promise<RunResult> => runAgentd([...args, '--data-dir', daemon.dataDir]);

/** `agentd ARGS` running in the background, its output collected. */
function background(args: string[], cwd = ROOT): { proc: ChildProcess; out: () => string; err: () => string; exited: Promise<number | null> } {
  const proc = spawn(process.execPath, [BIN, ...args, '--data-dir', daemon.dataDir], { cwd, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  let err = '';
  proc.stdout!.on('data', (d: Buffer) => (out += d.toString()));
  proc.stderr!.on('data', (d: Buffer) => (err += d.toString()));
  const exited = new Promise<number | null>((resolve) => proc.on('exit', (code) => setImmediate(() => resolve(code))));
  return { proc, out: () => out, err: () => err, exited };
}

async function newSession(config: Record<string, unknown> = {}): Promise<string> {
  // In the repository root (a session without a cwd would run in the home directory).
  return (await client.createSession({ cwd: ROOT, ...config })).session_id as string;
}

describe('agentd new', () => {
  it('prints the new session id; --json its descriptor with the flags applied', async () => {
    const plain = await agentd('new');
    expect(plain.code).toBe(0);
    const id = plain.stdout.trim();
    expect(id).toMatch(/^[A-Za-z0-9._:-]+$/);
    const listed = await agentd('sessions', '--json');
    expect((JSON.parse(listed.stdout) as Array<{ session_id: string }>).map((s) => s.session_id)).toContain(id);

    const r = await runAgentd(['new', '--json', '--cwd', '.', '--route', 'scripted', '--policy', 'auto', '--title', 'from a script', '--data-dir', daemon.dataDir]);
    expect(r.code).toBe(0);
    const d = JSON.parse(r.stdout) as { session_id: string; cwd: string; approval_policy: string; title: string; model: { route: string } };
    expect(d.cwd).toBe(ROOT); // a relative --cwd is the caller's directory, resolved
    expect(d.approval_policy).toBe('auto');
    expect(d.title).toBe('from a script');
    expect(d.model.route).toBe('scripted');
  });

  it('exits 2 for a route the daemon does not know and for a bad policy', async () => {
    const route = await agentd('new', '--route', 'no-such-route');
    expect(route.code).toBe(2);
    expect(route.stderr).toMatch(/cannot create the session/);
    const policy = await agentd('new', '--policy', 'sometimes');
    expect(policy.code).toBe(2);
    expect(policy.stderr).toMatch(/invalid/i);
  });
});

describe('agentd send --new', () => {
  it('creates the session, names it on stderr and follows the turn', async () => {
    const r = await agentd('send', '--new', 'hello new session', '--policy', 'ask', '--title', 'sent');
    expect(r.code).toBe(0);
    expect(r.stdout).toBe('echo: hello new session\n');
    const id = /^session (\S+)$/m.exec(r.stderr)?.[1];
    expect(id).toBeDefined();
    const attached = await client.attach(id!, { replay_batches: 0 });
    expect(attached.session.approval_policy).toBe('ask');
    expect(attached.session.title).toBe('sent');
  });

  it('exits 2 on a session id with --new, and on new-session flags without --new', async () => {
    const both = await agentd('send', '--new', 'some-session', 'text');
    expect(both.code).toBe(2);
    expect(both.stderr).toMatch(/with --new give only the TEXT/);
    const flags = await agentd('send', 'some-session', 'text', '--policy', 'auto');
    expect(flags.code).toBe(2);
    expect(flags.stderr).toMatch(/need --new/);
  });
});

describe('agentd approve', () => {
  it('exits 3 when nothing is pending and 2 for an unknown session', async () => {
    const sid = await newSession();
    const none = await agentd('approve', sid, '--decision', 'approve');
    expect(none.code).toBe(3);
    expect(none.stderr).toMatch(/not waiting for an approval/);
    const unknown = await agentd('approve', 'no-such-session', '--decision', 'approve');
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toMatch(/no session no-such-session/);
  });

  it('shows the request with its control characters visible and answers it; the waiting send goes on', async () => {
    const sid = await newSession({ approval_policy: 'ask' });
    await client.attach(sid, { replay_batches: 0 });
    // A carriage return that would hide the rest of the line on a terminal (a comment to the shell).
    const send = background(['send', sid, '!sh echo approved-by-script # hidden\rshown']);
    await client.waitForEvent(sid, (m) => m.type === 'exec_approval_request', 15_000);

    // Not a terminal and no --decision: a usage error, the approval stays pending.
    const noDecision = await agentd('approve', sid);
    expect(noDecision.code).toBe(2);
    expect(noDecision.stderr).toMatch(/give --decision/);

    const r = await agentd('approve', sid, '--decision', 'approve');
    expect(r.code).toBe(0);
    expect(r.stderr).toContain('approval required · shell');
    expect(r.stderr).toContain('$ echo approved-by-script # hidden\\rshown');
    expect(r.stderr).toContain(`in ${ROOT}`);
    expect(await send.exited).toBe(0);
    expect(send.err()).toContain('│ approved-by-script');

    // Answered: nothing is pending any more.
    const again = await agentd('approve', sid, '--decision', 'deny');
    expect(again.code).toBe(3);
  });

  it('--decision deny denies the call', async () => {
    const sid = await newSession({ approval_policy: 'ask' });
    await client.attach(sid, { replay_batches: 0 });
    const sub = await client.submitMessage(sid, '!sh echo never-runs');
    await client.waitForEvent(sid, (m) => m.type === 'exec_approval_request', 15_000);
    const r = await agentd('approve', sid, '--decision', 'deny');
    expect(r.code).toBe(0);
    expect(r.stderr).toMatch(/^deny$/m);
    const end = await client.waitTurnEnd(sid, sub);
    expect(end.type).toBe('turn_complete');
    expect(client.events(sid).some((m) => m.type === 'tool_call_end' && m.status === 'denied')).toBe(true);
  });
});

describe('agentd interrupt', () => {
  it('exits 3 without a running turn; interrupts a running one and exits 0 once it stopped', async () => {
    const sid = await newSession();
    const idle = await agentd('interrupt', sid);
    expect(idle.code).toBe(3);
    expect(idle.stderr).toMatch(/no turn is running/);

    await client.attach(sid, { replay_batches: 0 });
    const sub = await client.submitMessage(sid, '!sleep 20000');
    await client.waitForEvent(sid, (m, e) => m.type === 'turn_started' && e.submission_id === sub, 15_000);
    const r = await agentd('interrupt', sid);
    // The interrupt's own submission id goes on the turn_interrupted it caused.
    expect(r.code).toBe(0);
    expect(r.stderr).toMatch(/interrupted turn/);
    const started = await client.waitForEvent(sid, (m, e) => m.type === 'turn_started' && e.submission_id === sub);
    await client.waitForEvent(sid, (m, e) => m.type === 'turn_interrupted' && e.turn_id === started.turn_id);
  });

  it('exits 2 for an unknown session and for a daemon that is not there', async () => {
    const unknown = await agentd('interrupt', 'no-such-session');
    expect(unknown.code).toBe(2);
    const down = await runAgentd(['interrupt', 'x', '--url', 'ws://127.0.0.1:9', '--token', 't']);
    expect(down.code).toBe(2);
    expect(down.stderr).toMatch(/connection refused/);
  });
});

describe('agentd watch', () => {
  it('prints the events live until Ctrl-C (exit 0); --json one line per event', async () => {
    const sid = await newSession();
    const plain = background(['watch', sid]);
    const json = background(['watch', sid, '--json']);
    await waitFor(() => plain.err().includes('watching') && json.err().includes('watching'), 'both watchers attached', 15_000);
    const sub = await client.submitMessage(sid, 'watched message');
    await waitFor(() => plain.out().includes('echo: watched message') && json.out().includes('"turn_complete"'), 'both watchers to print the turn', 15_000);
    expect(plain.out()).toContain('› watched message');
    expect(plain.out()).toMatch(/── done in/);
    const lines = json.out().trimEnd().split('\n').map((l) => JSON.parse(l) as { session_id: string; sequence: number; submission_id: string | null; msg: { type: string } });
    expect(lines.every((l) => l.session_id === sid)).toBe(true);
    expect(lines.some((l) => l.submission_id === sub && l.msg.type === 'user_message')).toBe(true);
    const seqs = lines.map((l) => l.sequence);
    expect([...seqs].sort((a, b) => a - b)).toEqual(seqs);

    plain.proc.kill('SIGINT');
    json.proc.kill('SIGINT');
    expect(await plain.exited).toBe(0);
    expect(await json.exited).toBe(0);
  });

  it('--replay N prints the last N batches first; an unknown session exits 2', async () => {
    const sid = await newSession();
    await client.attach(sid, { replay_batches: 0 });
    const sub = await client.submitMessage(sid, 'before watching');
    await client.waitTurnEnd(sid, sub);
    const w = background(['watch', sid, '--replay', '100']);
    await waitFor(() => w.out().includes('echo: before watching'), 'the replayed reply', 15_000);
    w.proc.kill('SIGINT');
    expect(await w.exited).toBe(0);
    const unknown = await agentd('watch', 'no-such-session');
    expect(unknown.code).toBe(2);
  });
});

describe('help', () => {
  it('every new command has --help (with its exit codes) and --version', async () => {
    for (const cmd of ['new', 'approve', 'interrupt', 'watch']) {
      const help = await runAgentd([cmd, '--help']);
      expect(help.code).toBe(0);
      expect(help.stdout).toContain(`Usage: agentd ${cmd}`);
      expect(help.stdout).toContain('Exit codes');
      const version = await runAgentd([cmd, '--version']);
      expect(version.code).toBe(0);
    }
  });
});
