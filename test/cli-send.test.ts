/**
 * `agentd send` and `agentd sessions` end to end: the real CLI (bin/agentd.js) against
 * a real daemon with the scripted model. Non-interactive (stdin is not a terminal).
 */
import { spawn } from 'node:child_process';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connect, type TestClient } from './helpers/client.js';
import { BIN, ROOT, runAgentd, startDaemon, type Daemon, type RunResult } from './helpers/daemon.js';
import { waitFor } from './helpers/tui.js';

let daemon: Daemon;
let client: TestClient;

beforeAll(async () => {
  daemon = await startDaemon();
  client = await connect(daemon);
});

afterAll(async () => {
  await client?.close();
  await daemon?.stop();
});

const agentd = (...args: string[]): Promise<RunResult> => runAgentd([...args, '--data-dir', daemon.dataDir]);

async function newSession(config: Record<string, unknown> = {}): Promise<string> {
  const s = await client.createSession(config);
  return s.session_id as string;
}

describe('agentd sessions', () => {
  it('lists sessions as a table, newest first, and as JSON', async () => {
    const a = await newSession({ title: 'first one' });
    const b = await newSession();
    const table = await agentd('sessions');
    expect(table.code).toBe(0);
    const lines = table.stdout.trimEnd().split('\n');
    expect(lines[0]).toMatch(/^SESSION\s+STATUS\s+MODEL\s+UPDATED\s+BATCHES\s+TITLE\s+CWD$/);
    const ids = lines.slice(1).map((l) => l.split(/\s+/)[0]);
    expect(ids).toContain(a);
    expect(ids).toContain(b);
    expect(lines.find((l) => l.startsWith(a))).toMatch(/idle\s+scripted\s+\d+s ago\s+\d+\s+first one/);

    const c = await newSession({ title: 'bad\x1b]0;pwned\x07\x1b[31m title\nnext' });
    const cleaned = await agentd('sessions');
    expect(cleaned.stdout).not.toMatch(/[\x00-\x09\x0b-\x1f\x7f-\x9f]/);
    expect(cleaned.stdout.split('\n').find((l) => l.startsWith(c))).toMatch(/bad title next/);

    const json = await agentd('sessions', '--json', '--limit', '1');
    expect(json.code).toBe(0);
    const parsed = JSON.parse(json.stdout) as Array<{ session_id: string }>;
    expect(parsed).toHaveLength(1);
  });
});

describe('agentd send', () => {
  it('prints the reply on stdout, progress on stderr, and exits 0 on turn_complete', async () => {
    const sid = await newSession();
    const r = await agentd('send', sid, 'hello world');
    expect(r.code).toBe(0);
    expect(r.stdout).toBe('echo: hello world\n');
    expect(r.stderr).toContain('› hello world');
    expect(r.stderr).toMatch(/── done in /);
  });

  it('--json prints every event of the turn as one JSON line', async () => {
    const sid = await newSession();
    const r = await agentd('send', sid, 'json please', '--json', '--id', 'my-sub-1');
    expect(r.code).toBe(0);
    const events = r.stdout.trimEnd().split('\n').map((l) => JSON.parse(l) as { session_id: string; sequence: number; submission_id: string | null; turn_id: string | null; msg: { type: string } });
    const types = events.map((e) => e.msg.type);
    expect(types[0]).toBe('user_message');
    expect(types).toContain('turn_started');
    expect(types).toContain('agent_message');
    expect(types.at(-1)).toBe('turn_complete');
    expect(events.every((e) => e.session_id === sid)).toBe(true);
    expect(events[0]!.submission_id).toBe('my-sub-1');
    const seqs = events.map((e) => e.sequence);
    expect([...seqs].sort((x, y) => x - y)).toEqual(seqs);
  });

  it('exits 1 when the turn fails', async () => {
    const sid = await newSession();
    const r = await agentd('send', sid, '!fail');
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/turn failed/);
  });

  it('--approve answers approval requests; --deny denies them', async () => {
    const sid = await newSession({ approval_policy: 'ask' });
    const ok = await agentd('send', sid, '!sh echo hi-from-shell', '--approve');
    expect(ok.code).toBe(0);
    expect(ok.stderr).toMatch(/approval needed: \$ echo hi-from-shell/);
    expect(ok.stderr).toContain('approved');
    expect(ok.stderr).toContain('│ hi-from-shell');
    expect(ok.stdout).toContain('command exited with code 0');

    const denied = await agentd('send', sid, '!sh echo nope', '--deny');
    expect(denied.code).toBe(0);
    expect(denied.stderr).toContain('denied');
    expect(denied.stderr).not.toContain('│ nope');
  });

  it('without flags, a non-interactive send waits for another frontend to answer', async () => {
    const sid = await newSession({ approval_policy: 'ask' });
    await client.attach(sid, { replay_batches: 0 });
    const proc = spawn(process.execPath, [BIN, 'send', sid, '!sh echo answered-elsewhere', '--data-dir', daemon.dataDir], {
      cwd: ROOT,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stderr = '';
    proc.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    const exited = new Promise<number | null>((resolve) => proc.on('exit', resolve));
    const req = await client.waitForEvent(sid, (m) => m.type === 'exec_approval_request', 15_000);
    await waitFor(() => stderr.includes('waiting for approval'), 'the waiting note');
    await client.submit(sid, 'approve-1', { type: 'exec_approval', id: req.approval_id, decision: 'approve' });
    expect(await exited).toBe(0);
    expect(stderr).toContain('│ answered-elsewhere');
  });

  it('exits 1 when the turn is interrupted (from another client)', async () => {
    const sid = await newSession();
    await client.attach(sid, { replay_batches: 0 });
    const run = agentd('send', sid, '!sleep 5000');
    const started = await client.waitForEvent(sid, (m) => m.type === 'turn_started', 15_000);
    await client.submit(sid, 'int-1', { type: 'interrupt', turn_id: started.turn_id });
    const r = await run;
    expect(r.code).toBe(1);
    expect(r.stderr).toContain('interrupted');
  });

  it('exits 2 for an unknown session, a daemon that is not there, and bad usage', async () => {
    const unknown = await agentd('send', 'no-such-session', 'hi');
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toMatch(/no session no-such-session/);

    const down = await runAgentd(['send', 'x', 'hi', '--url', 'ws://127.0.0.1:9', '--token', 't']);
    expect(down.code).toBe(2);
    expect(down.stderr).toMatch(/connection refused/);

    const badToken = await agentd('sessions', '--token', 'wrong');
    expect(badToken.code).toBe(2);
    expect(badToken.stderr).toMatch(/unauthorized/);

    const usage = await runAgentd(['send', 'only-one-arg']);
    expect(usage.code).toBe(2);
    expect(usage.stderr).toMatch(/give SESSION_ID and TEXT/);
  });

  it('has --help and --version on every client command', async () => {
    for (const cmd of ['send', 'sessions', 'attach']) {
      const help = await runAgentd([cmd, '--help']);
      expect(help.code).toBe(0);
      expect(help.stdout).toContain(`Usage: agentd ${cmd}`);
      expect(help.stdout).toContain('--data-dir');
      const version = await runAgentd([cmd, '--version']);
      expect(version.code).toBe(0);
      expect(version.stdout.trim()).toMatch(/^\d+\.\d+\.\d+/);
    }
  });
});
