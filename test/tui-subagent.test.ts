/**
 * The TUI and subagents, end to end in tmux against a real daemon: a `delegate` call shows
 * as a block following the child's progress, the child's approval is answered from the
 * parent's view (y), `/tools` lists the session's tools, `/sessions` lists the child.
 * Needs tmux (skipped with a notice when it is not installed).
 */
import { rmSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BIN, ROOT, startDaemon, tempDataDir, type Daemon } from './helpers/daemon.js';
import { Tmux, hasTmux } from './helpers/tui.js';

const tmuxAvailable = hasTmux();
if (!tmuxAvailable) console.warn('tui-subagent: tmux is not installed; skipping (apt-get install -y tmux)');

describe.skipIf(!tmuxAvailable)('subagents in agentd attach', () => {
  let daemon: Daemon;
  let dataDir: string;
  let tmux: Tmux;

  beforeAll(async () => {
    dataDir = tempDataDir('agentd-tui-sub-');
    daemon = await startDaemon({ dataDir });
    tmux = new Tmux('subagent', 120, 60);
    tmux.start(`node ${BIN} attach --new --approval-policy ask --data-dir ${dataDir}`, { cwd: ROOT });
  });

  afterAll(async () => {
    tmux?.kill();
    await daemon?.stop();
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('follows a child, answers its approval from the parent, lists tools and children', async () => {
    await tmux.waitForText('Message the agent', 20_000);
    await tmux.waitForText(/● ready/);

    tmux.type('!delegate !sh echo from-child');
    tmux.keys('Enter');
    await tmux.waitForText(/Approval required · shell · subagent s_sub_/, 15_000);
    expect(tmux.text()).toMatch(/\$ echo from-child/);
    expect(tmux.text()).toMatch(/↳ subagent s_sub_\w+ · running/);
    expect(tmux.text()).toMatch(/waiting for approval: shell echo from-child/);
    tmux.keys('y');
    await tmux.waitForText('● subagent: command exited with code 0', 15_000);
    expect(tmux.text()).toMatch(/↳ subagent s_sub_\w+ · complete/);

    tmux.type('/tools');
    tmux.keys('Enter');
    await tmux.waitForText('session tools');
    expect(tmux.text()).toMatch(/shell\s+builtin\s+available · approval session/);
    expect(tmux.text()).toMatch(/delegate\s+builtin\s+available · approval auto/);

    tmux.type('/sessions');
    tmux.keys('Enter');
    await tmux.waitForText(/↳ subagent of/);
    expect(tmux.text()).toMatch(/s_sub_\w+ +idle/);
  }, 60_000);
});
