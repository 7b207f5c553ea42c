/**
 * The web UI and subagents: headless Chromium against a real daemon. A `delegate` call's
 * child asks for approval; the parent's page shows it inline (from the parent
 * descriptor's `pending_child_approval`) and answering it there approves the call on the
 * child session; the parent's turn then finishes with the child's result.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connect, type TestClient } from './helpers/client.js';
import { startDaemon, type Daemon } from './helpers/daemon.js';
import { HAVE_CHROMIUM, launchBrowser, openUi, pageErrors, type Browser } from './helpers/browser.js';

if (!HAVE_CHROMIUM) console.warn('web-subagent tests skipped: /usr/bin/chromium is not installed (apt-get install chromium)');

const T = 15_000;

describe.skipIf(!HAVE_CHROMIUM)('web UI: a subagent’s approval answered from the parent', () => {
  let d: Daemon;
  let b: Browser;
  let c: TestClient;

  beforeAll(async () => {
    [d, b] = await Promise.all([startDaemon(), launchBrowser()]);
    c = await connect(d);
  });
  afterAll(async () => {
    await c?.close();
    await b?.close();
    await d?.stop();
  });

  it('shows the child’s request inline and sends the answer to the child', async () => {
    const s = await c.createSession({ approval_policy: 'ask', title: 'parent' });
    const sid = s.session_id as string;
    await c.attach(sid);
    const page = await openUi(b, d, { session: sid });
    await page.getByText('Nothing here yet').waitFor({ timeout: T });
    await page.getByLabel('Message').fill('!delegate !sh echo child-web');
    await page.getByLabel('Message').press('Enter');
    const started = await c.waitForEvent(sid, (m) => m.type === 'subagent_started', T);
    const child = started.child_session_id as string;
    const card = page.locator(`[role="alertdialog"][data-child="${child}"]`);
    await card.waitFor({ timeout: T });
    expect(await card.innerText()).toContain('echo child-web');
    expect(await card.innerText()).toContain(`a subagent (session ${child})`);
    await card.getByRole('button', { name: 'Approve', exact: true }).click();
    await page.locator('.msg.agent', { hasText: 'subagent: command exited with code 0' }).waitFor({ timeout: T });
    await card.waitFor({ state: 'detached', timeout: T });
    await c.attach(child);
    const resolved = await c.waitForEvent(child, (m) => m.type === 'approval_resolved', T);
    expect(resolved.decision).toBe('approve');
    expect(pageErrors.get(page)).toEqual([]);
    await page.close();
  }, 60_000);
});
