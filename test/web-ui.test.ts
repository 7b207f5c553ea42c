/**
 * The web UI as a person uses it: headless Chromium against a real daemon. Create a
 * session, stream a reply, approve a shell command, interrupt, queue and steer, switch
 * model, page back through 500 batches, two tabs in sync, kill -9 mid-turn and resume
 * with no gap or duplicate, and pages from another origin / Host refused. Screenshots of
 * the main states go to test-results/web/.
 */
import { createServer, request as httpRequest, type Server } from 'node:http';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connect, type TestClient } from './helpers/client.js';
import { startDaemon, type Daemon } from './helpers/daemon.js';
import { HAVE_CHROMIUM, launchBrowser, openUi, pageErrors, shot, shownSequences, type Browser } from './helpers/browser.js';

if (!HAVE_CHROMIUM) console.warn('web-ui tests skipped: /usr/bin/chromium is not installed (apt-get install chromium)');

const T = 15_000;

describe.skipIf(!HAVE_CHROMIUM)('web UI in Chromium', () => {
  let d: Daemon;
  let b: Browser;
  let c: TestClient;

  beforeAll(async () => {
    [d, b] = await Promise.all([
      startDaemon({ config: { models: { routes: { alt: { provider: 'scripted' } } } } }),
      launchBrowser(['--host-resolver-rules=MAP rebind.test 127.0.0.1']),
    ]);
    c = await connect(d);
  });
  afterAll(async () => {
    await c?.close();
    await b?.close();
    await d?.stop();
  });

  const message = (page: Page) => page.getByLabel('Message');
  const send = async (page: Page, text: string): Promise<void> => {
    await message(page).fill(text);
    await message(page).press('Enter');
  };
  const noErrors = (page: Page): void => expect(pageErrors.get(page)).toEqual([]);

  let sessionId = '';

  it('creates a session from the sidebar and streams the reply; the token stays out of every URL', async () => {
    const page = await openUi(b, d);
    const urls: string[] = [];
    page.on('request', (r) => urls.push(r.url()));
    page.on('websocket', (ws) => urls.push(ws.url()));
    await page.getByText('No session open').waitFor();
    await shot(page, 'empty');
    expect(page.url()).not.toContain('token');
    expect(await page.evaluate(() => sessionStorage.getItem('agentd.token'))).toBe(d.token);

    await page.getByRole('button', { name: '+ New session' }).click();
    await page.getByLabel('Approvals').selectOption('ask');
    await page.getByRole('button', { name: 'Create session' }).click();
    await page.getByText('Nothing here yet').waitFor();
    sessionId = decodeURIComponent(/#session=(.+)$/.exec(page.url())![1]!);
    expect(page.url()).not.toContain('token');

    await send(page, '!sleep 1200');
    await page.locator('.msg.agent.streaming').waitFor({ timeout: T });
    await expect.poll(() => page.getByTestId('session-status').getAttribute('data-status')).toBe('running');
    await page.locator('.msg.agent:not(.streaming)', { hasText: 'slept' }).waitFor({ timeout: T });

    await message(page).fill('line one');
    await message(page).press('Shift+Enter');
    await message(page).pressSequentially('line two');
    await message(page).press('Enter');
    await page.locator('.msg.agent', { hasText: 'echo: line one' }).waitFor({ timeout: T });
    expect(await page.locator('.msg.user .text').last().innerText()).toBe('line one\nline two');
    await expect.poll(() => page.locator(`[data-session="${sessionId}"] [data-outcome]`).getAttribute('data-outcome')).toBe('complete');
    expect(urls.length).toBeGreaterThan(0);
    for (const u of urls) expect(u).not.toContain(d.token!);
    noErrors(page);
    await page.close();
  });

  it('approves a shell command from the approval card', async () => {
    const page = await openUi(b, d, { session: sessionId });
    await page.getByText('echo: line one').waitFor();
    await send(page, '!sh echo approved-by-web');
    const card = page.getByRole('alertdialog', { name: 'Approval needed' });
    await card.waitFor({ timeout: T });
    await expect.poll(() => page.getByTestId('session-status').getAttribute('data-status')).toBe('awaiting_approval');
    expect(await card.innerText()).toContain('echo approved-by-web');
    // A shell call's approve_for_session approves that exact command (docs/tools.md).
    for (const label of ['Approve', 'Approve this command for the session', 'Deny', 'Abort']) {
      await expect.poll(() => card.getByRole('button', { name: label, exact: true }).count()).toBe(1);
    }
    await shot(page, 'approval');
    await card.getByRole('button', { name: 'Approve', exact: true }).click();
    await card.waitFor({ state: 'detached', timeout: T });
    await page.getByText('command exited with code 0').waitFor({ timeout: T });
    const tool = page.locator('details.tool').last();
    expect(await tool.getAttribute('open')).not.toBeNull(); // the latest tool call is expanded
    expect(await tool.locator('.tool-output').innerText()).toContain('approved-by-web');
    expect(await tool.locator('summary').innerText()).toContain('exit 0');
    await shot(page, 'conversation');

    // Deny: the call gets a "denied" result and the turn goes on; the older call collapses.
    await send(page, '!sh echo denied-one');
    await card.waitFor({ timeout: T });
    await card.getByRole('button', { name: 'Deny' }).click();
    await page.getByText('command did not complete').waitFor({ timeout: T });
    const tools = page.locator('details.tool');
    expect(await tools.last().locator('summary').innerText()).toContain('denied');
    expect(await tools.first().getAttribute('open')).toBeNull();
    expect(await tools.last().getAttribute('open')).not.toBeNull();
    // The keyboard answers too (y = approve), outside the message box.
    await send(page, '!sh echo keyed-approval');
    await card.waitFor({ timeout: T });
    await page.locator('.transcript').click({ position: { x: 5, y: 5 } });
    await page.keyboard.press('y');
    await card.waitFor({ state: 'detached', timeout: T });
    await page.locator('.tool-output', { hasText: 'keyed-approval' }).waitFor({ timeout: T });
    // Abort: the turn is interrupted.
    await send(page, '!sh echo aborted-one');
    await card.waitFor({ timeout: T });
    await card.getByRole('button', { name: 'Abort' }).click();
    await page.locator('.turn-end.interrupted').waitFor({ timeout: T });
    await card.waitFor({ state: 'detached' });
    noErrors(page);
    await page.close();
  });

  it('interrupts a slow turn with Esc and with the Interrupt button; queues and steers', async () => {
    const page = await openUi(b, d, { session: sessionId });
    await page.getByText('command exited with code 0').first().waitFor();
    await send(page, '!sleep 20000');
    await page.locator('.msg.agent.streaming').waitFor({ timeout: T });
    await page.getByRole('radio', { name: 'Steer' }).check();
    await send(page, 'steer me');
    await page.locator('.msg.user', { hasText: 'steer me' }).locator('.who', { hasText: 'steer' }).waitFor({ timeout: T });
    await message(page).press('Escape');
    await expect.poll(() => page.locator('.turn-end.interrupted').count(), { timeout: T }).toBe(2);
    expect(await page.locator('.turn-end.interrupted').last().innerText()).toBe('interrupted');

    await send(page, '!sleep 20000');
    await page.getByRole('button', { name: 'Interrupt' }).waitFor({ timeout: T });
    await page.getByRole('radio', { name: 'Queue' }).check();
    await send(page, 'after the interrupt');
    await page.locator('.msg.user', { hasText: 'after the interrupt' }).locator('.who', { hasText: 'queued' }).waitFor({ timeout: T });
    await page.getByRole('button', { name: 'Interrupt' }).click();
    await expect.poll(() => page.locator('.turn-end.interrupted').count(), { timeout: T }).toBe(3);
    // The queued message runs as its own turn after the interrupted one.
    await page.locator('.msg.agent', { hasText: 'echo: after the interrupt' }).waitFor({ timeout: T });
    noErrors(page);
    await page.close();
  });

  it('switches the model from the picker filled by list_models', async () => {
    const page = await openUi(b, d, { session: sessionId });
    const picker = page.getByLabel('Model');
    await expect.poll(() => picker.locator('option').allInnerTexts()).toEqual(['scripted', 'alt']);
    expect(await picker.inputValue()).toBe('scripted');
    await picker.selectOption('alt');
    await page.locator('.note', { hasText: 'model switched to alt' }).waitFor({ timeout: T });
    expect(await picker.inputValue()).toBe('alt');
    const list = await c.ok({ type: 'list_sessions' });
    expect(list.sessions.find((s: { session_id: string }) => s.session_id === sessionId).model.route).toBe('alt');
    await expect.poll(() => page.locator(`[data-session="${sessionId}"] .sub`).innerText(), { timeout: T }).toContain('alt');

    // `#session=ID` alone: on a reload (the token is in this tab's sessionStorage) and pasted into an open page.
    const other = await c.createSession({ approval_policy: 'auto', title: 'by fragment' });
    await page.goto(`${d.httpUrl}/#session=${other.session_id}`);
    await page.reload();
    await page.getByRole('heading', { name: 'by fragment' }).waitFor({ timeout: T });
    await page.evaluate((id) => (location.hash = `#session=${id}`), sessionId);
    await page.getByRole('heading', { name: sessionId }).waitFor({ timeout: T });
    await page.locator('.note', { hasText: 'model switched to alt' }).waitFor({ timeout: T });
    noErrors(page);
    await page.close();
  });

  it('keeps two tabs in sync: an approval answered in one clears in the other', async () => {
    const s = await c.createSession({ approval_policy: 'ask', title: 'two tabs' });
    const [one, two] = await Promise.all([openUi(b, d, { session: s.session_id }), openUi(b, d, { session: s.session_id })]);
    await Promise.all([one.getByText('Nothing here yet').waitFor(), two.getByText('Nothing here yet').waitFor()]);
    await send(one, '!sh echo two-tabs');
    const cardOne = one.getByRole('alertdialog', { name: 'Approval needed' });
    const cardTwo = two.getByRole('alertdialog', { name: 'Approval needed' });
    await Promise.all([cardOne.waitFor({ timeout: T }), cardTwo.waitFor({ timeout: T })]);
    await cardTwo.getByRole('button', { name: 'Approve this command for the session' }).click();
    await Promise.all([cardOne.waitFor({ state: 'detached', timeout: T }), cardTwo.waitFor({ state: 'detached', timeout: T })]);
    await Promise.all([
      one.getByText('command exited with code 0').waitFor({ timeout: T }),
      two.getByText('command exited with code 0').waitFor({ timeout: T }),
    ]);
    await expect.poll(async () => (await shownSequences(one)).join()).toBe((await shownSequences(two)).join());
    expect(await one.locator('ol.items').innerText()).toBe(await two.locator('ol.items').innerText());
    noErrors(one);
    noErrors(two);
    await Promise.all([one.close(), two.close()]);
  });

  it('pages back through a 500-batch history on scroll-up, with no gap or duplicate', async () => {
    const s = await c.createSession({ approval_policy: 'auto', title: 'long history' });
    for (let i = 1; i <= 500; i++) {
      const q = await c.submit(s.session_id, `t${i}`, { type: 'capability_command', capability: 'session', command: 'title', input: `title ${i}` });
      expect(q.type).toBe('queued');
    }
    const attached = await c.attach(s.session_id, { replay_batches: 0 });
    await c.ok({ type: 'detach', session_id: s.session_id });
    const head: number = attached.head_sequence;
    expect(head).toBeGreaterThanOrEqual(500);

    const page = await openUi(b, d, { session: s.session_id });
    await expect.poll(async () => (await shownSequences(page)).length, { timeout: T }).toBeGreaterThanOrEqual(100);
    // The newest 100 first (a slow machine may already have paged one page further back).
    const initial = await shownSequences(page);
    expect(initial.slice(-100)).toEqual(Array.from({ length: 100 }, (_, i) => head - 99 + i));
    expect(initial).toEqual(Array.from({ length: initial.length }, (_, i) => head - initial.length + 1 + i));
    const transcript = page.locator('.transcript');
    await transcript.hover();
    const start = Date.now();
    while (!(await page.getByText('Beginning of the session').isVisible())) {
      await page.mouse.wheel(0, -4000);
      await page.waitForTimeout(60);
      if (Date.now() - start > 20_000) throw new Error(`did not reach the beginning; shown ${(await shownSequences(page)).length}`);
    }
    const shown = await shownSequences(page);
    expect(shown).toEqual(Array.from({ length: head }, (_, i) => i + 1));
    expect(await page.locator('.note', { hasText: 'session title:' }).count()).toBe(500);
    await page.locator('.note', { hasText: '"title 1"' }).first().waitFor();
    noErrors(page);
    await page.close();
  });

  it('shows the help overlay and works at phone width with the sessions drawer', async () => {
    const page = await openUi(b, d, { session: sessionId, width: 390 });
    await page.getByText('echo: after the interrupt').waitFor({ timeout: T });
    expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(390);
    await page.getByRole('button', { name: 'Show sessions' }).click();
    await page.getByRole('button', { name: 'Create session' }).or(page.getByRole('button', { name: '+ New session' })).first().waitFor();
    await page.waitForTimeout(250);
    await shot(page, 'phone-drawer');
    await page.keyboard.press('Escape');
    await page.locator('.transcript').click({ position: { x: 5, y: 5 } });
    await page.keyboard.press('?');
    const help = page.getByRole('dialog', { name: 'Keyboard shortcuts' });
    await help.waitFor();
    expect(await help.innerText()).toContain('Shift+Enter');
    await shot(page, 'phone-help');
    await page.keyboard.press('Escape');
    await help.waitFor({ state: 'detached' });
    noErrors(page);
    await page.close();
  });

  it('asks for the token when it is wrong, and says when a session does not exist', async () => {
    const page = await openUi(b, { httpUrl: d.httpUrl, token: 'wrong-token' }, { session: 's_missing' });
    await page.getByRole('heading', { name: 'This daemon needs a token' }).waitFor({ timeout: T });
    await shot(page, 'token');
    await page.getByLabel('Token').fill(d.token!);
    await page.getByRole('button', { name: 'Connect' }).click();
    await page.getByText('There is no session s_missing.').waitFor({ timeout: T });
    expect(await page.evaluate(() => sessionStorage.getItem('agentd.token'))).toBe(d.token);
    await page.close();
  });

  it('refuses a page from another origin and a request with a foreign Host (docs/web.md)', async () => {
    expect(await upgradeStatus(d.port, 'http://evil.example')).toBe(403);
    const foreign = await serveForeignPage(d.port, d.token!);
    try {
      const page = await b.context.newPage();
      await page.goto(foreign.url);
      await expect.poll(() => page.title(), { timeout: T }).toMatch(/^(refused|welcomed)/);
      expect(await page.title()).toMatch(/^refused/);
      const rebound = await page.goto(`http://rebind.test:${d.port}/`);
      expect(rebound?.status()).toBe(403);
      await page.close();
    } finally {
      foreign.server.close();
    }
  });
});

describe.skipIf(!HAVE_CHROMIUM)('web UI across a daemon kill -9', () => {
  it('reconnects, resumes the turn and shows every batch once', async () => {
    const [d1, b] = await Promise.all([startDaemon({ config: { approval_policy: 'auto' } }), launchBrowser()]);
    let d2: Daemon | undefined;
    try {
      const c1 = await connect(d1);
      const s = await c1.createSession({ approval_policy: 'auto' });
      await c1.close();
      const page = await openUi(b, d1, { session: s.session_id });
      await page.getByText('Nothing here yet').waitFor();
      await page.getByLabel('Message').fill('!sleep 2500');
      await page.getByLabel('Message').press('Enter');
      await expect.poll(() => page.locator('.msg.agent.streaming .text').innerText(), { timeout: T }).toMatch(/s/);
      d1.proc.kill('SIGKILL');
      await d1.exited;
      await page.locator('[data-link="reconnecting"]').waitFor({ timeout: T });
      await shot(page, 'reconnecting');
      d2 = await startDaemon({ dataDir: d1.dataDir, args: ['--port', String(d1.port)] });
      await page.locator('.turn-end.complete').waitFor({ timeout: 20_000 });
      await page.locator('.marker', { hasText: 'turn resumed' }).waitFor();
      await expect.poll(() => page.locator('[data-link]').count()).toBe(0);

      const c2 = await connect(d2);
      const attached = await c2.attach(s.session_id, { replay_batches: 10_000 });
      const journal = await c2.until(() => {
        const seqs = c2.frames.filter((f) => f.type === 'batch' && f.session_id === s.session_id).map((f) => f.sequence as number);
        return seqs.length === attached.head_sequence ? seqs : undefined;
      });
      await expect.poll(() => shownSequences(page)).toEqual(journal);
      expect(await page.locator('.msg.user').count()).toBe(1);
      expect(await page.locator('.turn-end').count()).toBe(1);
      // What the reconnected page shows is what a fresh page shows from the journal.
      const fresh = await openUi(b, d2, { session: s.session_id });
      await fresh.locator('.turn-end.complete').waitFor({ timeout: T });
      expect(await fresh.locator('ol.items').innerText()).toBe(await page.locator('ol.items').innerText());
      expect(await shownSequences(fresh)).toEqual(journal);
      noErrorsIn(page);
      noErrorsIn(fresh);
      await c2.close();
    } finally {
      await b.close();
      if (d2) await d2.stop();
      else await d1.stop();
    }
  });
});

function noErrorsIn(page: Page): void {
  expect(pageErrors.get(page)).toEqual([]);
}

/** HTTP status of a raw /v1 upgrade carrying `origin`. */
function upgradeStatus(port: number, origin: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = httpRequest({
      host: '127.0.0.1',
      port,
      path: '/v1',
      headers: {
        connection: 'Upgrade',
        upgrade: 'websocket',
        origin,
        'sec-websocket-version': '13',
        'sec-websocket-key': Buffer.from('0123456789abcdef').toString('base64'),
      },
    });
    req.on('upgrade', (res, socket) => {
      socket.destroy();
      resolve(res.statusCode ?? 0);
    });
    req.on('response', (res) => {
      res.resume();
      resolve(res.statusCode ?? 0);
    });
    req.on('error', reject);
    req.end();
  });
}

/** A page on another origin that tries the daemon's socket with the token; its title tells what happened. */
async function serveForeignPage(daemonPort: number, token: string): Promise<{ server: Server; url: string }> {
  const html = `<!doctype html><title>pending</title><script>
const ws = new WebSocket('ws://127.0.0.1:${daemonPort}/v1');
ws.onopen = () => ws.send(JSON.stringify({ type: 'hello', protocol: 1, token: ${JSON.stringify(token)} }));
ws.onmessage = (e) => { if (JSON.parse(e.data).type === 'welcome') document.title = 'welcomed'; };
ws.onclose = () => { if (document.title !== 'welcomed') document.title = 'refused'; };
</script>`;
  const server = createServer((_req, res) => {
    res.writeHead(200, { 'content-type': 'text/html' });
    res.end(html);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as { port: number }).port;
  return { server, url: `http://127.0.0.1:${port}/` };
}
