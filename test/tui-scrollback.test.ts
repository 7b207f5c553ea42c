/**
 * End to end in tmux: the TUI leaves the conversation in the terminal's scrollback when
 * it detaches, and Ctrl-O shows the whole output of a tool call that the transcript cut
 * to its tail. Real daemon, real `agentd attach`. Skipped when tmux is not installed.
 */
import { rmSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BIN, ROOT, startDaemon, tempDataDir, type Daemon } from './helpers/daemon.js';
import { Tmux, hasTmux } from './helpers/tui.js';

const tmuxAvailable = hasTmux();
if (!tmuxAvailable) console.warn('tui-scrollback: tmux is not installed; skipping (apt-get install -y tmux)');

/** The row of a call's output line N as the TUI draws it. */
const outRow = (n: number) => `   │ ${n}`;

describe.skipIf(!tmuxAvailable)('agentd attach: scrollback and the Ctrl-O pager', () => {
  let daemon: Daemon;
  let dataDir: string;
  let tmux: Tmux;

  beforeAll(async () => {
    dataDir = tempDataDir('agentd-tui-scrollback-');
    daemon = await startDaemon({ dataDir });
    tmux = new Tmux('scrollback', 100, 30);
    tmux.start(`node ${BIN} attach --new --approval-policy auto --data-dir ${dataDir}`, { cwd: ROOT });
  });

  afterAll(async () => {
    tmux?.kill();
    await daemon?.stop();
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('Ctrl-O pages through a cut output; after detaching the conversation stays on the terminal', async () => {
    await tmux.waitForText('Message the agent', 20_000);
    await tmux.waitForText(/● ready/);
    tmux.type('hello scrollback');
    tmux.keys('Enter');
    await tmux.waitForText('● echo: hello scrollback');
    await tmux.waitForText(/● ready/);

    // A 40-line output: the transcript shows its last 12 rows and says how many it cut.
    tmux.type('!sh seq 1 40');
    tmux.keys('Enter');
    await tmux.waitForText('● command exited with code 0');
    let screen = tmux.screen();
    expect(screen).toContain('   │ … 28 more lines above · ctrl-o to see all');
    expect(screen).toContain(outRow(40));
    expect(screen).toContain(outRow(29));
    expect(screen).not.toContain(outRow(28));
    expect(screen).not.toContain(outRow(1));

    // Ctrl-O: the pager opens on the latest call at its first line.
    tmux.keys('C-o');
    await tmux.waitForText('output of $ seq 1 40');
    screen = tmux.screen();
    expect(screen).toContain(outRow(1));
    expect(screen).toContain(outRow(27)); // 30 rows: header + 27 output rows + status line + 1
    expect(screen).not.toContain(outRow(28));
    expect(screen.join('\n')).toContain('q/esc back');
    expect(screen.join('\n')).not.toContain('Message the agent');

    // ↓ scrolls a row, PgDn a page (up to the last line), PgUp back, Home to the top.
    tmux.keys('Down');
    await tmux.waitForText(/^ {3}│ 28$/m);
    expect(tmux.screen()).not.toContain(outRow(1));
    tmux.keys('PageDown');
    await tmux.waitForText(/^ {3}│ 40$/m);
    expect(tmux.screen()).toContain(outRow(14));
    expect(tmux.screen()).not.toContain(outRow(13));
    tmux.keys('Home');
    await tmux.waitForText(/^ {3}│ 1$/m);

    // q goes back to the transcript.
    tmux.keys('q');
    await tmux.waitForText('Message the agent');
    screen = tmux.screen();
    expect(screen).not.toContain(outRow(1));
    expect(screen).toContain(outRow(40));

    // Detach: the shell's screen comes back with the conversation printed on it.
    tmux.type('/quit');
    tmux.keys('Enter');
    await tmux.waitForText(/Reattach with: agentd attach s\S+/);
    const visible = tmux.screen();
    expect(visible).toContain(' ● command exited with code 0');
    const all = tmux.history();
    const at = (row: string) => all.indexOf(row);
    const order = [' › hello scrollback', ' ● echo: hello scrollback', ' › !sh seq 1 40', ' ● $ seq 1 40', outRow(40), ' ● command exited with code 0'].map(at);
    expect(order.every((i) => i >= 0), `${order.join(',')} in\n${all.join('\n')}`).toBe(true);
    expect([...order].sort((a, b) => a - b)).toEqual(order);
    expect(all.filter((l) => l === ' ● echo: hello scrollback')).toHaveLength(1);
    expect(all.findIndex((l) => l.startsWith('Detached from session'))).toBeGreaterThan(order.at(-1)!);
  }, 60_000);
});
