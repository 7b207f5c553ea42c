/**
 * Pure pieces of the client commands: session choice for `attach`, the `sessions`
 * table, and the plain-text event printer of `send`.
 */
import { describe, expect, it } from 'vitest';
import type { Event } from '../protocol/index.js';
import { chooseSession, mostRecent } from '../src/cli/attach.js';
import { TurnWatch } from '../src/cli/turn-watch.js';
import { PlainPrinter } from '../src/render/plain.js';
import { formatSessionsTable } from '../src/render/sessions-table.js';
import { descriptor, echoTurn, ev } from './helpers/tui.js';

describe('attach: which session', () => {
  const sessions = [
    descriptor({ session_id: 'old', updated_at: 100 }),
    descriptor({ session_id: 'recent', updated_at: 300 }),
    descriptor({ session_id: 'mid', updated_at: 200 }),
  ];
  const fake = (list = sessions) => {
    const created: string[] = [];
    return {
      created,
      client: {
        listAllSessions: async () => list,
        createSession: async () => {
          created.push('new');
          return descriptor({ session_id: 'brand-new' });
        },
      },
    };
  };

  it('attaches to the most recently updated session, or creates one when there is none', async () => {
    expect(mostRecent(sessions)?.session_id).toBe('recent');
    const a = fake();
    expect(await chooseSession(a.client, undefined, false)).toEqual({ sessionId: 'recent', created: false });
    expect(a.created).toEqual([]);
    const b = fake([]);
    expect(await chooseSession(b.client, undefined, false)).toEqual({ sessionId: 'brand-new', created: true });
  });

  it('uses the given id, or creates with --new', async () => {
    const a = fake();
    expect(await chooseSession(a.client, 'mid', false)).toEqual({ sessionId: 'mid', created: false });
    expect(await chooseSession(a.client, undefined, true)).toEqual({ sessionId: 'brand-new', created: true });
    await expect(chooseSession(a.client, 'mid', true)).rejects.toThrow(/not both/);
  });
});

describe('send: which events are the turn of the submission', () => {
  it('follows the submission, then its turn, and maps the end to an exit code', () => {
    const w = new TurnWatch('u1');
    const other = ev({ type: 'warning', message: 'x' }, { submission_id: 'other', turn_id: 't0' });
    expect(w.owns(other)).toBe(false);
    const user = ev({ type: 'user_message', text: 'hi', mode: 'turn' }, { submission_id: 'u1', turn_id: 't1' });
    expect(w.owns(user)).toBe(true);
    const delta = ev({ type: 'agent_message_delta', delta: 'h' }, { turn_id: 't1' });
    expect(w.owns(delta)).toBe(true);
    expect(w.exitCode(delta)).toBeNull();
    const end = ev({ type: 'turn_failed', error: { code: 'model_error', message: 'x' } } as never, { turn_id: 't1' });
    expect(w.exitCode(end)).toBe(1);
    expect(w.exitCode(ev({ type: 'turn_complete' } as never, { turn_id: 't0' }))).toBeNull();
    expect(w.exitCode(ev({ type: 'turn_complete' } as never, { turn_id: 't1' }))).toBe(0);
  });
});

describe('sessions table', () => {
  it('aligns columns and shows relative times', () => {
    const now = 1_000_000;
    const out = formatSessionsTable(
      [
        descriptor({ session_id: 'sess-a', updated_at: now - 5_000, title: 'Fix the build', head_sequence: 12 }),
        descriptor({ session_id: 'b', updated_at: now - 7_200_000, status: 'awaiting_approval', cwd: '/srv' }),
      ],
      now,
    );
    expect(out.split('\n')).toEqual([
      'SESSION  STATUS    MODEL     UPDATED  BATCHES  TITLE          CWD',
      'sess-a   idle      scripted  5s ago   12       Fix the build  /work',
      'b        approval  scripted  2h ago   0                       /srv',
      '',
    ]);
    expect(formatSessionsTable([])).toMatch(/no sessions/);
  });

  it('strips escape sequences, control characters and line breaks from titles and paths', () => {
    const out = formatSessionsTable(
      [descriptor({ session_id: 's', title: '\x1b[2J\x1b]0;pwned\x07evil\rok\nsecond\x00line\x9b', cwd: '/tmp/\x1b[31mx' })],
      0,
    );
    expect(out).not.toMatch(/[\x00-\x09\x0b-\x1f\x7f-\x9f]/);
    const row = out.split('\n')[1]!;
    expect(row).toMatch(/ok secondline\s+\/tmp\/x$/);
    expect(out.split('\n')).toHaveLength(3);
  });
});

describe('send: plain printer', () => {
  function print(groups: Event[][]) {
    let out = '';
    let log = '';
    const p = new PlainPrinter({ write: (t: string) => (out += t) }, { write: (t: string) => (log += t) });
    for (const g of groups) for (const e of g) p.event(e);
    p.finish();
    return { out, log };
  }

  it('streams the reply to stdout and progress to stderr', () => {
    const { out, log } = print(echoTurn('hi'));
    expect(out).toBe('echo: hi\n');
    expect(log).toBe('› hi\n── done in 12ms · 7 tokens\n');
  });

  it('prints tool calls with indented output, approvals and the end', () => {
    const tags = { submission_id: 'u', turn_id: 't' };
    const args = { command: 'echo hi' };
    const { out, log } = print([
      [ev({ type: 'tool_call_begin', call_id: 'c', tool: 'shell', arguments: args }, tags)],
      [ev({ type: 'exec_approval_request', approval_id: 'a', call_id: 'c', tool: 'shell', arguments: args, cwd: '/w' }, tags)],
      [ev({ type: 'approval_resolved', approval_id: 'a', decision: 'approve_for_session' }, tags)],
      [ev({ type: 'exec_output_delta', call_id: 'c', stream: 'stdout', chunk: 'h' }, tags)],
      [ev({ type: 'exec_output_delta', call_id: 'c', stream: 'stdout', chunk: 'i\nthere\n' }, tags)],
      [ev({ type: 'tool_call_end', call_id: 'c', status: 'ok', output: 'hi\nthere\n', exit_code: 0, duration_ms: 5 }, tags)],
      [ev({ type: 'agent_message', text: 'command exited with code 0' }, tags)],
      [ev({ type: 'turn_failed', error: { code: 'x', message: 'y' } }, tags)],
    ]);
    expect(out).toBe('command exited with code 0\n');
    expect(log.split('\n')).toEqual([
      '$ echo hi',
      '⏸ approval needed: $ echo hi (in /w)',
      '  approved for this session',
      '  │ hi',
      '  │ there',
      '  └ exit 0 (5ms)',
      '── turn failed: x: y',
      '',
    ]);
  });

  it('prints no escape sequence or control character from any event text', () => {
    const bad = '\x1b]0;pwned\x07\x1b[2Jbad\x00';
    const { out, log } = print([
      [ev({ type: 'user_message', text: bad, mode: 'turn' })],
      [ev({ type: 'agent_message', text: bad })],
      [ev({ type: 'warning', message: bad })],
      [ev({ type: 'model_changed', route: bad, model: 'm', reasoning_effort: null, context_window: null } as never)],
      [ev({ type: 'turn_interrupted', reason: bad } as never)],
      [ev({ type: 'turn_failed', error: { code: 'x', message: bad } })],
    ]);
    expect(out + log).not.toMatch(/[\x00-\x09\x0b-\x1f\x7f-\x9f]/);
    expect(log).toContain('── turn failed: x: bad');
  });
});
