/**
 * Sessions in the web UI, in headless Chromium against a real daemon: rename in place
 * (the header, the list and another client see the new title), delete after a
 * confirmation (Cancel keeps it; Delete removes it from the list and the daemon, and a
 * second tab showing it closes it), the new-session form offering the last working
 * directory used, and a notification for an approval while the tab is hidden.
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connect, type TestClient } from './helpers/client.js';
import { startDaemon, type Daemon } from './helpers/daemon.js';
import { HAVE_CHROMIUM, launchBrowser, openUi, pageErrors, type Browser } from './helpers/browser.js';

const T = 15_000;

describe.skipIf(!HAVE_CHROMIUM)('web UI: renaming, deleting, new-session cwd, notifications', () => {
  let d: Daemon;
  let b: Browser;
  let c: TestClient;

  beforeAll(async () => {
    [d, b] = await Promise.all([startDaemon({ config: { approval_policy: 'auto' } }), launchBrowser()]);
    c = await connect(d);
  });
  afterAll(async () => {
    await c?.close();
    await b?.close();
    await d?.stop();
  });

  const listed = async (): Promise<Array<{ session_id: string; title: string | null }>> => (await c.request({ type: 'list_sessions' })).sessions;
  const entry = (page: Page, id: string) => page.locator(`[data-session="${id}"]`);

  it('renames a session in place; Esc cancels an edit without interrupting anything', async () => {
    const id = (await c.createSession({ approval_policy: 'auto', title: 'old name' })).session_id as string;
    const page = await openUi(b, d, { session: id });
    const title = page.getByRole('button', { name: 'Rename session old name' });
    await title.click();
    const input = page.getByLabel('Session title');
    await input.fill('never saved');
    await input.press('Escape');
    await title.waitFor();
    expect(await listed().then((l) => l.find((s) => s.session_id === id)?.title)).toBe('old name');

    await title.click();
    await input.fill('Release notes draft');
    await input.press('Enter');
    await page.getByRole('button', { name: 'Rename session Release notes draft' }).waitFor({ timeout: T });
    await expect.poll(() => entry(page, id).locator('.title').innerText(), { timeout: T }).toBe('Release notes draft');
    await expect.poll(async () => (await listed()).find((s) => s.session_id === id)?.title, { timeout: T }).toBe('Release notes draft');
    await page.locator('.note', { hasText: 'renamed to “Release notes draft”' }).waitFor({ timeout: T });
    // After a reload the title comes from the daemon.
    await page.reload();
    await page.getByRole('button', { name: 'Rename session Release notes draft' }).waitFor({ timeout: T });
    expect(pageErrors.get(page)).toEqual([]);
    await page.close();
  });

  it('deletes a session only after the confirmation; another tab showing it closes it', async () => {
    const keep = (await c.createSession({ approval_policy: 'auto', title: 'keep me' })).session_id as string;
    const id = (await c.createSession({ approval_policy: 'auto', title: 'delete me' })).session_id as string;
    const sub = await c.submitMessage(id, 'some text to delete');
    await c.attach(id);
    await c.waitTurnEnd(id, sub);
    const page = await openUi(b, d, { session: id });
    const other = await openUi(b, d, { session: id });
    await other.getByText('echo: some text to delete').waitFor({ timeout: T });
    await page.getByText('echo: some text to delete').waitFor({ timeout: T });

    await page.getByRole('button', { name: 'Delete', exact: true }).click();
    const dialog = page.getByRole('alertdialog', { name: 'Delete this session?' });
    await dialog.waitFor();
    expect(await dialog.innerText()).toContain('delete me');
    await dialog.getByRole('button', { name: 'Cancel' }).click();
    await dialog.waitFor({ state: 'detached' });
    expect((await listed()).some((s) => s.session_id === id)).toBe(true);

    await page.getByRole('button', { name: 'Delete', exact: true }).click();
    await dialog.getByRole('button', { name: 'Delete', exact: true }).click();
    await dialog.waitFor({ state: 'detached', timeout: T });
    await page.getByText('No session open').waitFor({ timeout: T });
    expect(page.url()).not.toContain(id);
    await expect.poll(() => entry(page, id).count(), { timeout: T }).toBe(0);
    expect(await entry(page, keep).count()).toBe(1);
    expect((await listed()).some((s) => s.session_id === id)).toBe(false);
    // The other tab was attached to it: told by the daemon, it closes the session too.
    await other.getByText('No session open').waitFor({ timeout: T });
    await other.getByText('was deleted').waitFor({ timeout: T });
    expect(pageErrors.get(page)).toEqual([]);
    await Promise.all([page.close(), other.close()]);
  });

  it('offers the working directory used last in the new-session form', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'agentd-web-cwd-'));
    const page = await openUi(b, d);
    await page.getByRole('button', { name: '+ New session' }).click();
    await page.getByLabel('Working directory').fill(dir);
    await page.getByRole('button', { name: 'Create session' }).click();
    await page.getByText('Nothing here yet').waitFor({ timeout: T });
    await expect.poll(() => page.locator('.heading .cwd').innerText()).toBe(dir);
    await page.reload();
    await page.getByRole('button', { name: '+ New session' }).click();
    expect(await page.getByLabel('Working directory').inputValue()).toBe(dir);
    await page.close();
  });

  it('shows a notification for an approval while the tab is hidden, after the user enabled them', async () => {
    const id = (await c.createSession({ approval_policy: 'ask', title: 'needs me' })).session_id as string;
    const page = await b.context.newPage();
    // The browser's notification system and tab visibility are outside the page: record instead.
    await page.addInitScript(() => {
      const shown: Array<{ title: string; body?: string }> = [];
      (window as unknown as { __shown: typeof shown }).__shown = shown;
      let permission: NotificationPermission = 'default';
      class FakeNotification {
        static get permission() {
          return permission;
        }
        static requestPermission() {
          permission = 'granted';
          return Promise.resolve(permission);
        }
        onclick: (() => void) | null = null;
        constructor(title: string, opts?: { body?: string }) {
          shown.push({ title, body: opts?.body });
        }
        close() {}
      }
      Object.defineProperty(window, 'Notification', { value: FakeNotification });
      let hidden = false;
      Object.defineProperty(document, 'visibilityState', { get: () => (hidden ? 'hidden' : 'visible') });
      (window as unknown as { __hide: () => void }).__hide = () => {
        hidden = true;
      };
    });
    await page.goto(`${d.httpUrl}/#token=${d.token}&session=${id}`);
    await page.getByText('Nothing here yet').waitFor({ timeout: T });
    await page.getByRole('button', { name: 'Enable notifications' }).click();
    await page.getByRole('button', { name: 'Notifications on' }).waitFor();

    // Visible tab: no notification.
    await c.submitMessage(id, '!sh echo first');
    await page.getByRole('alertdialog', { name: 'Approval needed' }).waitFor({ timeout: T });
    expect(await page.evaluate(() => (window as unknown as { __shown: unknown[] }).__shown)).toEqual([]);
    await page.getByRole('button', { name: 'Approve', exact: true }).click();
    await page.getByText('command exited with code 0').waitFor({ timeout: T });

    await page.evaluate(() => (window as unknown as { __hide: () => void }).__hide());
    await c.submitMessage(id, '!sh echo second');
    await expect
      .poll(() => page.evaluate(() => (window as unknown as { __shown: Array<{ title: string; body?: string }> }).__shown), { timeout: T })
      .toEqual([{ title: 'Approval needed — needs me', body: 'shell: echo second' }]);
    await page.close();
  });
});
