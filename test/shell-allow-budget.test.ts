/**
 * Through a real daemon and socket with the scripted model: shell allow rules (config and
 * per session, the dangerous-character rule), `approve_for_session` on a shell call
 * approving that exact command, and the token budget failing a turn and being raised.
 */
import { afterEach, describe, expect, test } from 'vitest';
import { connect, type TestClient } from './helpers/client.js';
import { startDaemon, type Daemon } from './helpers/daemon.js';
import { cleanup, tempDir } from './helpers/session.js';
import { shellCommandAllowed } from '../src/tools/shell_allow.js';

const daemons: Daemon[] = [];
const clients: TestClient[] = [];
const dirs: string[] = [];
afterEach(async () => {
  for (const c of clients.splice(0)) await c.close().catch(() => {});
  for (const d of daemons.splice(0)) await d.stop('SIGKILL').catch(() => {});
  dirs.splice(0).forEach(cleanup);
});

async function boot(config: object) {
  const d = await startDaemon({ config });
  daemons.push(d);
  const c = await connect(d);
  clients.push(c);
  const cwd = tempDir('agentd-allow-');
  dirs.push(cwd);
  return { d, c, cwd };
}

/** Submit `!sh CMD`; answers whether the call waited for approval (then denies it) or ran. */
async function waitedForApproval(c: TestClient, s: string, command: string): Promise<boolean> {
  const id = await c.submitMessage(s, `!sh ${command}`);
  const first = await c.waitForEvent(s, (m, e) => e.submission_id === id && (m.type === 'exec_approval_request' || m.type === 'tool_call_end'));
  if (first.type === 'exec_approval_request') {
    await c.submit(s, `deny-${id}`, { type: 'exec_approval', id: first.approval_id, decision: 'deny' });
    await c.waitTurnEnd(s, id);
    return true;
  }
  await c.waitTurnEnd(s, id);
  return false;
}

describe('shell allow rules', () => {
  test('the matcher: exact rules, prefix rules, and the dangerous characters', () => {
    expect(shellCommandAllowed('npm test', ['npm test'])).toBe(true);
    expect(shellCommandAllowed('npm test -- --watch', ['npm test'])).toBe(false);
    expect(shellCommandAllowed('npm test -- --watch', ['npm test*'])).toBe(true);
    for (const bad of ['npm test; rm -rf x', 'npm test && rm x', 'npm test | sh', 'npm test `rm x`', 'npm test $(rm x)', 'npm test > f', 'npm test < f', 'npm test\nrm x', 'npm test & rm x']) {
      expect(shellCommandAllowed(bad, ['npm test*']), bad).toBe(false);
      expect(shellCommandAllowed(bad, [bad]), `exact ${bad}`).toBe(true);
    }
    expect(shellCommandAllowed('ls', [])).toBe(false);
  });

  test('config and per-session rules skip approval under ask; chained commands still wait', async () => {
    const { c, cwd } = await boot({ approval_policy: 'ask', tools: { shell: { allow: ['echo config*'] } } });
    const s = (await c.createSession({ approval_policy: 'ask', cwd, shell_allow: ['echo exact one', 'echo session*'] })).session_id as string;
    await c.attach(s);
    expect(await waitedForApproval(c, s, 'echo config rule')).toBe(false);
    expect(await waitedForApproval(c, s, 'echo session rule')).toBe(false);
    expect(await waitedForApproval(c, s, 'echo exact one')).toBe(false);
    expect(await waitedForApproval(c, s, 'echo exact one two')).toBe(true);
    expect(await waitedForApproval(c, s, 'echo session; touch pwned')).toBe(true);
    expect(await waitedForApproval(c, s, 'echo config && touch pwned')).toBe(true);
    expect(await waitedForApproval(c, s, 'ls')).toBe(true);
    // Another session has only the config's rules.
    const other = (await c.createSession({ approval_policy: 'ask', cwd })).session_id as string;
    await c.attach(other);
    expect(await waitedForApproval(c, other, 'echo session rule')).toBe(true);
    expect(await waitedForApproval(c, other, 'echo config rule')).toBe(false);
  });

  test('create_session refuses a malformed shell_allow and a non-positive token_budget', async () => {
    const { c, cwd } = await boot({});
    for (const config of [{ shell_allow: [''] }, { shell_allow: 'npm test' }, { shell_allow: Array(257).fill('x') }, { token_budget: 0 }, { token_budget: 1.5 }]) {
      const r = await c.request({ type: 'create_session', config: { cwd, ...config } });
      expect(r.type, JSON.stringify(config).slice(0, 40)).toBe('error');
      expect(r.code).toBe('invalid_frame');
    }
  });

  test('approve_for_session on a shell call approves that exact command and no other', async () => {
    const { c, cwd } = await boot({ approval_policy: 'ask' });
    const s = (await c.createSession({ approval_policy: 'ask', cwd })).session_id as string;
    await c.attach(s);
    const id = await c.submitMessage(s, '!sh echo remembered');
    const req = await c.waitForEvent(s, (m) => m.type === 'exec_approval_request');
    await c.submit(s, 'always-1', { type: 'exec_approval', id: req.approval_id, decision: 'approve_for_session' });
    await c.waitTurnEnd(s, id);
    expect(await waitedForApproval(c, s, 'echo remembered')).toBe(false);
    expect(await waitedForApproval(c, s, 'echo remembered; touch x')).toBe(true);
    expect(await waitedForApproval(c, s, 'echo something else')).toBe(true);
  });
});

describe('token budget', () => {
  test('the turn past the budget fails budget_exceeded, new turns fail at once, `budget` raises it', async () => {
    const { c, cwd } = await boot({ approval_policy: 'auto' });
    const created = await c.createSession({ cwd, token_budget: 60 });
    expect(created.token_budget).toBe(60);
    const s = created.session_id as string;
    await c.attach(s);
    // The scripted model counts the request's bytes / 4: the first call spends well under 60?
    // Whatever it spends, turns go on until the total reaches 60, then fail before calling.
    let failed: Record<string, unknown> | null = null;
    for (let i = 0; i < 20 && !failed; i++) {
      const id = await c.submitMessage(s, `hello ${i}`);
      const end = await c.waitTurnEnd(s, id);
      if (end.type === 'turn_failed') failed = end;
      else expect(end.type).toBe('turn_complete');
    }
    expect(failed).toMatchObject({ type: 'turn_failed', error: { code: 'budget_exceeded' } });
    const callsBefore = c.events(s).filter((m) => m.type === 'token_usage').length;
    // A new turn fails at once: no model call.
    const again = await c.submitMessage(s, 'still there?');
    expect(await c.waitTurnEnd(s, again)).toMatchObject({ type: 'turn_failed', error: { code: 'budget_exceeded' } });
    expect(c.events(s).filter((m) => m.type === 'token_usage').length).toBe(callsBefore);
    // Raise it; the next turn runs.
    await c.submit(s, 'raise', { type: 'capability_command', capability: 'session', command: 'budget', arguments: { tokens: 1_000_000 } });
    const out = await c.waitForEvent(s, (m) => m.type === 'capability_output' && m.command === 'budget');
    expect(out.output).toMatchObject({ token_budget: 1_000_000 });
    const after = await c.submitMessage(s, 'go on');
    expect(await c.waitTurnEnd(s, after)).toMatchObject({ type: 'turn_complete' });
    const listed = await c.request({ type: 'list_sessions' });
    expect(listed.sessions.find((x: { session_id: string }) => x.session_id === s).token_budget).toBe(1_000_000);
  });

  test("limits.session_token_budget is every new session's default; a bad `budget` argument is a warning", async () => {
    const { c, cwd } = await boot({ approval_policy: 'auto', limits: { session_token_budget: 5 } });
    const s = (await c.createSession({ cwd })).session_id as string;
    await c.attach(s);
    const first = await c.submitMessage(s, 'one');
    expect(await c.waitTurnEnd(s, first)).toMatchObject({ type: 'turn_complete' }); // 0 spent before it
    const second = await c.submitMessage(s, 'two');
    expect(await c.waitTurnEnd(s, second)).toMatchObject({ type: 'turn_failed', error: { code: 'budget_exceeded' } });
    await c.submit(s, 'bad', { type: 'capability_command', capability: 'session', command: 'budget', arguments: { tokens: -3 } });
    const warning = await c.waitForEvent(s, (m) => m.type === 'warning');
    expect(warning.message).toMatch(/positive integer/);
    await c.submit(s, 'none', { type: 'capability_command', capability: 'session', command: 'budget', arguments: { tokens: null } });
    await c.waitForEvent(s, (m) => m.type === 'capability_output' && m.command === 'budget');
    const third = await c.submitMessage(s, 'three');
    expect(await c.waitTurnEnd(s, third)).toMatchObject({ type: 'turn_complete' });
  });
});
