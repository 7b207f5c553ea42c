/**
 * Approval prompts that cannot lie (docs/tools.md "Approval prompts"): against a real
 * daemon, a shell call `rm -rf DIR #\rls -la` and a call whose harmful first line is
 * followed by 60 newlines are shown whole — the carriage return as `\r`, the first line
 * in view — by `agentd send` (a real CLI process), the terminal UI (`agentd attach` in a
 * real tmux terminal of 30 rows) and the web card (headless Chromium), and the web card
 * shows every argument of a call, not just its `command`.
 */
import { spawn } from 'node:child_process';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { callLines, callText, lineText, visibleText } from '../src/render/call-view.js';
import { connect, type TestClient } from './helpers/client.js';
import { BIN, ROOT, startDaemon, type Daemon } from './helpers/daemon.js';
import { HAVE_CHROMIUM, launchBrowser, openUi, type Browser } from './helpers/browser.js';
import { hasTmux, Tmux, waitFor } from './helpers/tui.js';

const LYING = 'rm -rf /tmp/agentd-victim #\rls -la';
const TALL = `rm -rf /tmp/agentd-victim${'\n'.repeat(60)}ls -la`;

let d: Daemon;
let c: TestClient;

beforeAll(async () => {
  d = await startDaemon({ config: { approval_policy: 'ask' } });
  c = await connect(d);
});
afterAll(async () => {
  await c?.close();
  await d?.stop();
});

/** A session whose turn waits for approval of a shell call of `command`. */
async function pendingShell(command: string): Promise<string> {
  const s = await c.createSession({ approval_policy: 'ask' });
  const id = s.session_id as string;
  await c.attach(id);
  await c.submitMessage(id, `!sh ${command}`);
  await c.waitForEvent(id, (m) => m.type === 'exec_approval_request');
  return id;
}

describe('the call view', () => {
  it('shows control characters as escapes and every argument', () => {
    expect(callText({ command: LYING })).toBe('$ rm -rf /tmp/agentd-victim #\\rls -la');
    expect(visibleText('a\x1b[31mb\u202ec\td')).toBe('a\\x1b[31mb\\u202ec\\td');
    expect(callText({ command: 'ls -la', text: 'rm -rf ~' })).toBe('$ ls -la\ntext: rm -rf ~');
    const tall = callLines({ command: TALL }).map(lineText);
    expect(tall[0]).toBe('$ rm -rf /tmp/agentd-victim');
    expect(tall).toHaveLength(3);
    expect(tall[2]).toBe('  ls -la');
  });
});

describe('agentd send', () => {
  /** Run `send` (not a terminal: it prints the request and waits); its stderr once the request is shown. */
  async function sendShows(command: string): Promise<string> {
    const s = await c.createSession({ approval_policy: 'ask' });
    const proc = spawn(process.execPath, [BIN, 'send', s.session_id as string, `!sh ${command}`, '--data-dir', d.dataDir], {
      cwd: ROOT,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stderr = '';
    proc.stderr.on('data', (b: Buffer) => (stderr += b.toString()));
    try {
      await waitFor(() => stderr.includes('waiting for approval'), 15_000);
      return stderr;
    } finally {
      proc.kill('SIGKILL');
    }
  }

  it('prints the whole command with the carriage return made visible', async () => {
    const err = await sendShows(LYING);
    expect(err).toContain('$ rm -rf /tmp/agentd-victim #\\rls -la');
    expect(err).not.toContain('\r');
  });

  it('prints the first line of a command padded with newlines', async () => {
    const err = await sendShows(TALL);
    const lines = err.split('\n');
    const first = lines.findIndex((l) => l.includes('$ rm -rf /tmp/agentd-victim'));
    const last = lines.findIndex((l) => l.includes('  ls -la'));
    expect(first).toBeGreaterThan(-1);
    expect(last - first).toBeLessThan(5);
  });
});

describe.skipIf(!hasTmux())('agentd attach (30 rows)', () => {
  it('keeps the start of the command in view and the carriage return visible', async () => {
    for (const [name, command, shown] of [
      ['lying', LYING, '$ rm -rf /tmp/agentd-victim #\\rls -la'],
      ['tall', TALL, '$ rm -rf /tmp/agentd-victim'],
    ] as const) {
      const id = await pendingShell(command);
      const tmux = new Tmux(`approval-${name}`, 100, 30);
      try {
        tmux.start(`node ${BIN} attach ${id} --data-dir ${d.dataDir}`, { cwd: ROOT });
        await tmux.waitForText('Approval required', 20_000);
        const screen = tmux.text();
        expect(screen).toContain(shown);
        if (name === 'tall') expect(screen).toContain('ls -la');
      } finally {
        tmux.kill();
      }
    }
  });
});

describe.skipIf(!HAVE_CHROMIUM)('the web approval card', () => {
  let b: Browser;
  beforeAll(async () => {
    b = await launchBrowser();
  });
  afterAll(async () => {
    await b?.close();
  });

  /** A session whose turn waits for approval of `tool` called with `args`, open in a page. */
  async function cardFor(tool: string, args: Record<string, unknown>) {
    const s = await c.createSession({ approval_policy: 'ask' });
    const id = s.session_id as string;
    await c.attach(id);
    await c.submitMessage(id, `!mcp ${tool} ${JSON.stringify(args)}`);
    await c.waitForEvent(id, (m) => m.type === 'exec_approval_request');
    const page = await openUi(b, d, { session: id });
    await page.locator('.approval').waitFor({ timeout: 15_000 });
    return page;
  }

  it('shows every argument with control characters visible, not just the command', async () => {
    const page = await cardFor('shell', { command: 'ls -la\rX', text: 'rm -rf ~' });
    try {
      expect(await page.locator('.approval [data-arg="command"] pre').innerText()).toBe('ls -la\\rX');
      expect(await page.locator('.approval [data-arg="text"] pre').innerText()).toBe('rm -rf ~');
    } finally {
      await page.close();
    }
  });

  it("shows a write_file's content collapsed, one click away", async () => {
    const content = Array.from({ length: 40 }, (_, i) => `line ${i} of the file`).join('\n');
    const page = await cardFor('write_file', { path: 'x.txt', content });
    try {
      expect(await page.locator('.approval [data-arg="path"] pre').innerText()).toBe('x.txt');
      const summary = page.locator('.approval [data-arg="content"] summary');
      expect(await summary.innerText()).toContain('40 lines');
      await summary.click();
      expect(await page.locator('.approval [data-arg="content"] pre').innerText()).toBe(content);
    } finally {
      await page.close();
    }
  });
});

