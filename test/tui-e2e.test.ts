/**
 * End to end: `agentd attach` in a real terminal (tmux) against a real daemon. Type a
 * message and see the reply; approve `!sh echo hi` with y; interrupt `!sleep 5000` with
 * Esc; kill the daemon (SIGKILL) mid-turn and start it again on the same port and data
 * dir, and see the TUI reconnect and the turn resume, with no duplicated or missing lines. Needs tmux
 * (skipped with a notice when it is not installed).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BIN, ROOT, startDaemon, tempDataDir, type Daemon } from './helpers/daemon.js';
import { Tmux, hasTmux } from './helpers/tui.js';
import { rmSync } from 'node:fs';

const tmuxAvailable = hasTmux();
if (!tmuxAvailable) console.warn('tui-e2e: tmux is not installed; skipping (apt-get install -y tmux)');

/** Rows of the screen matching a pattern. */
const count = (screen: string[], re: RegExp) => screen.filter((l) => re.test(l)).length;

describe.skipIf(!tmuxAvailable)('agentd attach in tmux', () => {
  let daemon: Daemon;
  let dataDir: string;
  let tmux: Tmux;

  beforeAll(async () => {
    dataDir = tempDataDir('agentd-tui-e2e-');
    daemon = await startDaemon({ dataDir });
    tmux = new Tmux('attach', 100, 60);
    tmux.start(`node ${BIN} attach --new --approval-policy ask --cwd ${ROOT} --data-dir ${dataDir}`, { cwd: ROOT });
  });

  afterAll(async () => {
    tmux?.kill();
    await daemon?.stop();
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('chats, approves, interrupts, and survives a daemon restart without duplicates', async () => {
    await tmux.waitForText('Message the agent', 20_000);
    await tmux.waitForText(/● ready/);

    // 1. A message and its streamed reply.
    tmux.type('hello from tmux');
    tmux.keys('Enter');
    await tmux.waitForText('● echo: hello from tmux');
    await tmux.waitForText(/── done in/);

    // 2. A shell call that asks for approval, approved with y.
    tmux.type('!sh echo hi');
    tmux.keys('Enter');
    await tmux.waitForText('Approval required');
    expect(tmux.text()).toMatch(/\$ echo hi/);
    expect(tmux.text()).toContain(`in ${ROOT}`);
    tmux.keys('y');
    await tmux.waitForText('● command exited with code 0');
    let screen = tmux.screen();
    expect(screen).toContain(' ● $ echo hi');
    expect(screen).toContain('   │ hi');
    expect(screen.some((l) => /^ {3}└ exit 0 · \d+ms · approved$/.test(l))).toBe(true);

    // 3. A long turn interrupted with Esc.
    tmux.type('!sleep 5000');
    tmux.keys('Enter');
    await tmux.waitForText(/working .*esc to interrupt/);
    const t0 = Date.now();
    tmux.keys('Escape');
    await tmux.waitForText(/── interrupted/, 10_000);
    expect(Date.now() - t0).toBeLessThan(4000);
    await tmux.waitForText(/● ready/);

    // 4. Kill the daemon in the middle of a turn; start it again on the same port and
    //    data dir: the TUI reconnects, and the turn resumes and finishes.
    tmux.type('!sleep 3000');
    tmux.keys('Enter');
    await tmux.waitForText(/working .*esc to interrupt/);
    const port = daemon.port;
    await daemon.stop('SIGKILL');
    await tmux.waitForText(/reconnecting/);
    daemon = await startDaemon({ dataDir, args: ['--port', String(port)] });
    await tmux.waitForText('✓ reconnected', 15_000);
    await tmux.waitForText('turn resumed after a daemon restart or takeover', 10_000);
    await tmux.waitForText(/^ ● slept$/m, 15_000);
    await tmux.waitForText(/● ready/);
    tmux.type('after restart');
    tmux.keys('Enter');
    await tmux.waitForText('● echo: after restart');
    await tmux.waitForText(/● ready/);

    // Everything appears exactly once, in order.
    screen = tmux.screen();
    const expected: [RegExp, number][] = [
      [/^ › hello from tmux$/, 1],
      [/^ ● echo: hello from tmux$/, 1],
      [/^ › !sh echo hi$/, 1],
      [/^ ● \$ echo hi$/, 1],
      [/^ {3}│ hi$/, 1],
      [/^ ● command exited with code 0$/, 1],
      [/^ › !sleep 5000$/, 1],
      [/^ ── interrupted /, 1],
      [/^ › !sleep 3000$/, 1],
      [/reconnected$/, 1],
      [/turn resumed after a daemon restart or takeover/, 1],
      [/^ ● slept$/, 1],
      [/^ › after restart$/, 1],
      [/^ ● echo: after restart$/, 1],
      [/^ ── done in /, 4],
    ];
    for (const [re, n] of expected) expect(count(screen, re), `${re} in\n${screen.join('\n')}`).toBe(n);
    const order = ['hello from tmux', '!sh echo hi', '!sleep 5000', '!sleep 3000', 'after restart'].map((t) => screen.findIndex((l) => l === ` › ${t}`));
    expect([...order].sort((a, b) => a - b)).toEqual(order);

    // 5. /quit detaches, leaving the session running, and restores the shell screen.
    tmux.type('/quit');
    tmux.keys('Enter');
    await tmux.waitForText(/Reattach with: agentd attach s\S+/);
  });
});
