/**
 * Ink component tests (ink-testing-library): transcript viewport, approval prompt,
 * status line, input box, and the whole App driven by keys against the real protocol
 * client and an in-process fake server.
 */
import { render } from 'ink-testing-library';
import { createElement as h } from 'react';
import { afterEach, describe, expect, it } from 'vitest';
import type { ExecApprovalRequestMsg } from '../protocol/index.js';
import { AgentdClient } from '../src/client/client.js';
import { App } from '../src/tui/app.js';
import { ApprovalPrompt } from '../src/tui/approval-prompt.js';
import { TuiController } from '../src/tui/controller.js';
import { InputBox } from '../src/tui/input-box.js';
import { emptyInput, setValue } from '../src/tui/input.js';
import { StatusLine } from '../src/tui/status-line.js';
import { seg } from '../src/tui/text.js';
import { Transcript } from '../src/tui/transcript-view.js';
import type { SessionInfo } from '../src/tui/session-info.js';
import { emptyTranscript } from '../src/tui/transcript.js';
import { FakeServer, echoTurn, ev, waitFor } from './helpers/tui.js';

const strip = (s: string | undefined) => (s ?? '').replace(/\x1b\[[0-9;]*m/g, '');

const REQ: ExecApprovalRequestMsg = {
  type: 'exec_approval_request',
  approval_id: 'a1',
  call_id: 'c1',
  tool: 'shell',
  arguments: { command: 'echo hi' },
  cwd: '/home/me/project',
};

const info = (patch: Partial<SessionInfo> = {}): SessionInfo => ({
  ...emptyTranscript('sess-1').info,
  model: { route: 'scripted', model: 'scripted', reasoning_effort: null, context_window: null },
  ...patch,
});

describe('Transcript viewport', () => {
  const lines = Array.from({ length: 30 }, (_, i) => [seg(`row ${i + 1}`)]);

  it('follows the bottom by default, showing exactly `height` rows', () => {
    const r = render(h(Transcript, { lines, height: 5, scrollTop: null }));
    expect(strip(r.lastFrame()).split('\n')).toEqual(['row 26', 'row 27', 'row 28', 'row 29', 'row 30']);
  });

  it('shows a scrolled position with a "more below" marker, and pads short content', () => {
    const r = render(h(Transcript, { lines, height: 4, scrollTop: 10 }));
    const out = strip(r.lastFrame()).split('\n');
    expect(out.slice(0, 3)).toEqual(['row 11', 'row 12', 'row 13']);
    expect(out[3]).toMatch(/↓ 17 more lines below/);
    const short = render(h(Transcript, { lines: lines.slice(0, 2), height: 4, scrollTop: null }));
    expect(strip(short.lastFrame()).split('\n')).toHaveLength(4);
  });
});

describe('ApprovalPrompt', () => {
  it('shows the tool, command, cwd and the answer keys', () => {
    const r = render(h(ApprovalPrompt, { request: REQ, width: 70 }));
    const out = strip(r.lastFrame());
    expect(out).toContain('Approval required · shell');
    expect(out).toContain('$ echo hi');
    expect(out).toContain('in /home/me/project');
    // On a shell call, `a` approves that exact command for the session (docs/tools.md).
    expect(out.replace(/[│\s]+/g, ' ')).toMatch(/y approve a approve this command for the session n deny esc interrupt turn/);
    expect(out.split('\n')[0]).toMatch(/^╭─+╮$/);
  });

  it('shows non-shell tools by every argument, and the sending state', () => {
    const r = render(
      h(ApprovalPrompt, {
        request: { ...REQ, tool: 'write_file', arguments: { path: 'a.txt', content: 'abc' } },
        width: 60,
        answered: true,
      }),
    );
    const out = strip(r.lastFrame());
    expect(out).toContain('path: a.txt');
    expect(out).toContain('content: abc');
    expect(out).toContain('sending answer…');
    const asking = strip(render(h(ApprovalPrompt, { request: { ...REQ, tool: 'write_file', arguments: { path: 'a.txt', content: 'abc' } }, width: 100 })).lastFrame());
    expect(asking).toMatch(/a approve for session\s+n deny/);
  });
});

describe('StatusLine', () => {
  it('idle: hint on the left; model, session, tokens and state on the right', () => {
    const r = render(
      h(StatusLine, {
        info: info({ usage: { input_tokens: 1200, output_tokens: 34 } }),
        conn: { kind: 'connected', server: 'x' },
        width: 100,
      }),
    );
    const out = strip(r.lastFrame());
    expect(out).toContain('ready · enter to send');
    expect(out).toContain('scripted · sess-1 · 1.2k in / 34 out · idle');
  });

  it('drops tokens, then the session id, and shortens the hint on narrow terminals', () => {
    const props = {
      info: info({ sessionId: 's_0123456789abcdef', usage: { input_tokens: 5, output_tokens: 6 } }),
      conn: { kind: 'connected' as const, server: 'x' },
    };
    const wide = strip(render(h(StatusLine, { ...props, width: 120 })).lastFrame());
    expect(wide).toMatch(/ready · enter to send .* scripted · s_0123456789abcdef · 5 in \/ 6 out · idle/);
    const mid = strip(render(h(StatusLine, { ...props, width: 60 })).lastFrame());
    expect(mid).toMatch(/● ready +scripted · s_0123456789abcdef · idle/);
    const narrow = strip(render(h(StatusLine, { ...props, width: 36 })).lastFrame());
    expect(narrow).toMatch(/● ready +scripted · idle/);
    expect(narrow.length).toBeLessThanOrEqual(36);
  });

  it('running: spinner, elapsed time and the interrupt hint', () => {
    const r = render(
      h(StatusLine, {
        info: info({ activeTurnId: 't1', turnStartedAt: 1000 }),
        conn: { kind: 'connected', server: 'x' },
        width: 100,
        now: 4200,
        frame: 0,
      }),
    );
    expect(strip(r.lastFrame())).toMatch(/⠋ working 3\.2s · esc to interrupt .* running/);
  });

  it('awaiting approval, reconnecting, and the Ctrl-C warning', () => {
    const conn = { kind: 'connected' as const, server: 'x' };
    const a = render(h(StatusLine, { info: info({ activeTurnId: 't', pendingApproval: REQ }), conn, width: 100 }));
    expect(strip(a.lastFrame())).toMatch(/waiting for your approval .* awaiting approval/);
    const b = render(
      h(StatusLine, {
        info: info(),
        conn: { kind: 'reconnecting', attempt: 3, delayMs: 2000, retryAt: 3000, error: 'x' },
        width: 100,
        now: 1000,
        frame: 1,
      }),
    );
    expect(strip(b.lastFrame())).toContain('⠙ reconnecting in 2s (attempt 3)');
    const c = render(h(StatusLine, { info: info(), conn, width: 100, ctrlCArmed: true }));
    expect(strip(c.lastFrame())).toContain('press Ctrl-C again to detach');
  });
});

describe('InputBox', () => {
  it('shows the placeholder when empty, and the text with a cursor', () => {
    const empty = render(h(InputBox, { state: emptyInput(), width: 60 }));
    expect(strip(empty.lastFrame())).toContain('›  Message the agent…');
    const typed = render(h(InputBox, { state: setValue(emptyInput(), 'hello world'), width: 60 }));
    expect(strip(typed.lastFrame())).toContain('› hello world');
  });

  it('wraps long text and multi-line input inside the box', () => {
    const r = render(h(InputBox, { state: setValue(emptyInput(), 'first line\nsecond line'), width: 30 }));
    const out = strip(r.lastFrame()).split('\n');
    expect(out).toHaveLength(4);
    expect(out[1]).toContain('› first line');
    expect(out[2]).toContain('  second line');
  });
});

describe('App', () => {
  let server: FakeServer;
  let client: AgentdClient;
  let controller: TuiController;
  const cleanups: (() => void)[] = [];

  afterEach(async () => {
    for (const c of cleanups.splice(0)) c();
    controller?.dispose();
    client?.close();
    await server?.stop();
  });

  async function mount(setup: (s: FakeServer) => void, rows = 24) {
    server = await FakeServer.start();
    server.addSession({ session_id: 's1' });
    setup(server);
    client = new AgentdClient({ url: server.url, backoff: { initialMs: 20, maxMs: 50 } });
    await client.start();
    controller = new TuiController(client);
    await controller.open('s1');
    let quit = 0;
    const r = render(h(App, { controller, columns: 80, rows, onQuit: () => quit++ }));
    cleanups.push(() => r.unmount());
    const screen = () => strip(r.lastFrame());
    const until = (re: RegExp | string, what = String(re)) =>
      waitFor(() => (typeof re === 'string' ? screen().includes(re) : re.test(screen())) && screen(), what, 5000).catch((e: Error) => {
        throw new Error(`${e.message}\n${screen()}`);
      });
    const submits = () => server.received.filter((x) => x.frame.type === 'submit').map((x) => (x.frame.submission as { op: Record<string, unknown> }).op);
    // Let Ink mount and start reading stdin before keys are written.
    await until(/Message the agent|Approval required/);
    await new Promise((res) => setTimeout(res, 50));
    return { r, screen, until, submits, quits: () => quit };
  }

  const tick = () => new Promise((r) => setTimeout(r, 30));

  it('shows the replayed history, then streams new batches', async () => {
    const { until, screen } = await mount((s) => {
      for (const events of echoTurn('earlier')) s.commit('s1', events);
    });
    await until('● echo: earlier');
    expect(screen()).toContain('› earlier');
    expect(screen()).toMatch(/─ start of session ─/);
    for (const events of echoTurn('later', 't2', 'u2')) server.commit('s1', events);
    await until('● echo: later');
    const out = screen();
    expect(out.indexOf('echo: earlier')).toBeLessThan(out.indexOf('echo: later'));
    expect(out).toMatch(/scripted · s1 · .* · idle/);
  });

  it('sends what is typed on Enter and keeps it in the input history', async () => {
    const { r, submits } = await mount(() => {});
    // Two writes back to back, before any re-render: the second must see the first.
    r.stdin.write('hello');
    r.stdin.write('\r');
    await waitFor(() => submits().length === 1, 'submit');
    expect(submits()[0]).toEqual({ type: 'message', text: 'hello' });
    await tick();
    r.stdin.write('\x1b[A'); // Up: previous message back in the editor
    await waitFor(() => strip(r.lastFrame()).includes('› hello'), 'history recall');
  });

  it('answers an approval with y / a / n, hiding the input box while asked', async () => {
    const tags = { submission_id: 'u', turn_id: 't' };
    const { r, until, submits, screen } = await mount((s) => {
      s.commit('s1', [ev({ type: 'turn_started', turn_id: 't' }, tags)]);
      s.commit('s1', [ev({ ...REQ }, tags)]);
    });
    await until('Approval required');
    expect(screen()).toContain('in /home/me/project');
    expect(screen()).not.toContain('Message the agent');
    r.stdin.write('y');
    await waitFor(() => submits().length === 1, 'approval');
    expect(submits()[0]).toEqual({ type: 'exec_approval', id: 'a1', decision: 'approve' });
    await until('Message the agent'); // the prompt goes away once answered
    expect(screen()).not.toContain('Approval required');
    server.commit('s1', [ev({ type: 'approval_resolved', approval_id: 'a1', decision: 'approve' }, tags)]);
    await until('running… · approved');

    for (const [key, decision] of [
      ['a', 'approve_for_session'],
      ['n', 'deny'],
    ] as const) {
      const id = `a-${key}`;
      server.commit('s1', [ev({ ...REQ, approval_id: id }, tags)]);
      await until('Approval required');
      r.stdin.write(key);
      await waitFor(() => submits().some((o) => o.id === id), `answer ${key}`);
      expect(submits().find((o) => o.id === id)).toEqual({ type: 'exec_approval', id, decision });
      server.commit('s1', [ev({ type: 'approval_resolved', approval_id: id, decision }, tags)]);
      await until('Message the agent');
    }
  });

  it('interrupts the running turn with Esc', async () => {
    const tags = { submission_id: 'u', turn_id: 'turn-7' };
    const { r, until, submits } = await mount((s) => {
      s.commit('s1', [ev({ type: 'turn_started', turn_id: 'turn-7' }, tags)]);
      s.commit('s1', [ev({ type: 'agent_message_delta', delta: 'sl' }, tags)]);
    });
    await until(/working .*esc to interrupt/);
    r.stdin.write('\x1b');
    await waitFor(() => submits().length === 1, 'interrupt');
    expect(submits()[0]).toEqual({ type: 'interrupt', turn_id: 'turn-7' });
    await until('interrupting…');
    server.commit('s1', [ev({ type: 'turn_interrupted', reason: 'interrupted' }, tags)]);
    await until('── interrupted');
    await until('ready · enter to send');
  });

  it('runs slash commands: /model, /help, unknown', async () => {
    const { r, until, submits } = await mount(() => {});
    r.stdin.write('/model local\r');
    await waitFor(() => submits().length === 1, 'set_model');
    expect(submits()[0]).toEqual({ type: 'set_model', route: 'local' });
    r.stdin.write('/help\r');
    await until('commands and keys');
    r.stdin.write('/bogus\r');
    await until('unknown command /bogus');
  });

  it('suggests commands while typing a slash', async () => {
    const { r, until } = await mount(() => {});
    r.stdin.write('/se');
    await until(/\/sessions\s+list sessions/);
    r.stdin.write('\t');
    await until('› /sessions');
  });

  it('pages older history in with PageUp', async () => {
    const { r, until, screen } = await mount((s) => {
      for (let i = 1; i <= 130; i++) s.commit('s1', [ev({ type: 'warning', message: `note ${i}` })]);
    });
    await until('note 130');
    // Page up to the top of the 100 replayed batches; the next page is requested there.
    for (let i = 0; i < 40 && !server.received.some((x) => x.frame.type === 'history'); i++) {
      r.stdin.write('\x1b[5~');
      await tick();
    }
    const hist = server.received.find((x) => x.frame.type === 'history');
    expect(hist?.frame).toMatchObject({ session_id: 's1', before_sequence: 31 });
    r.stdin.write('\x1b[5~');
    await until('note 30');
    for (let i = 0; i < 20 && !screen().includes('start of session'); i++) {
      r.stdin.write('\x1b[5~');
      await tick();
    }
    await until('note 1\n');
    expect(screen()).toContain('start of session');
    r.stdin.write('\x1b'); // Esc jumps back to the bottom
    await until('note 130');
  });

  it('detaches on Ctrl-C pressed twice (the first only arms it)', async () => {
    const { r, until, quits } = await mount(() => {});
    r.stdin.write('\x03');
    await until('press Ctrl-C again to detach');
    expect(quits()).toBe(0);
    r.stdin.write('\x03');
    await waitFor(() => quits() === 1, 'quit');
  });

  it('shows the connection state and reconnects', async () => {
    const { until, screen } = await mount((s) => {
      for (const events of echoTurn('before')) s.commit('s1', events);
    });
    await until('echo: before');
    await server.stop();
    await until(/reconnecting/);
    for (const events of echoTurn('meanwhile', 't2', 'u2')) server.commitSilently('s1', events);
    await server.restart();
    await until('echo: meanwhile');
    await until('✓ reconnected');
    const out = screen();
    expect(out.match(/echo: before/g)).toHaveLength(1);
    expect(out.match(/echo: meanwhile/g)).toHaveLength(1);
  });
});
