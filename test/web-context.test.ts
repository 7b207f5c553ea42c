/**
 * The web UI and what the model sees, in headless Chromium against a real daemon: the
 * header's gauge shows the descriptor's `context` against the route's window and follows
 * the journal; the Compact button and the typed `/compact` both compact (a marker note
 * with tokens before → after appears); thinking and compaction notes render.
 */
import type { Page } from 'playwright-core';
import { describe, expect, it } from 'vitest';
import { HAVE_CHROMIUM, launchBrowser, openUi, pageErrors, shot } from './helpers/browser.js';
import { daemonPool } from './helpers/pool.js';

const T = 15_000;

const pool = daemonPool();

describe.skipIf(!HAVE_CHROMIUM)('web UI: context gauge and /compact', () => {
  const send = async (page: Page, text: string): Promise<void> => {
    await page.getByLabel('Message').fill(text);
    await page.getByLabel('Message').press('Enter');
  };

  it('the gauge shows the context against the window; the Compact button and /compact compact the session', async () => {
    const [{ d, c }, b] = await Promise.all([
      pool.boot({ approval_policy: 'auto', models: { default: 'small', routes: { small: { provider: 'scripted', context_window: 4000 } } } }),
      launchBrowser().then((browser) => pool.track(browser)),
    ]);
    const s = (await c.createSession({ approval_policy: 'auto' })).session_id as string;
    await c.attach(s);
    const id = await c.submitMessage(s, `hello from the web test ${'and a long tail '.repeat(40)}`);
    await c.waitTurnEnd(s, id);
    const page = await openUi(b, d, { session: s });
    await page.locator('.msg.agent', { hasText: 'echo: hello from the web test' }).waitFor({ timeout: T });
    const gauge = page.locator('.gauge .context');
    await gauge.waitFor({ timeout: T });
    expect(await gauge.innerText()).toMatch(/\d+% of 4(\.0)?k/);
    const title = await gauge.getAttribute('title');
    const used = Number(/about (\d+) of 4000/.exec(title ?? '')?.[1]);
    expect(used).toBeGreaterThan(0);

    await page.getByRole('button', { name: 'Compact' }).click();
    await page.locator('.note', { hasText: 'context compacted (manual)' }).waitFor({ timeout: T });
    await expect.poll(async () => Number(/about (\d+) of/.exec((await gauge.getAttribute('title')) ?? '')?.[1])).toBeLessThan(used);
    await shot(page, 'compacted');

    await send(page, 'second message');
    await page.locator('.msg.agent', { hasText: 'echo: second message' }).waitFor({ timeout: T });
    await send(page, '/compact');
    await expect.poll(() => page.locator('.note', { hasText: 'context compacted (manual)' }).count(), { timeout: T }).toBe(2);
    // Both were real compactions in the journal, not only notes on the page.
    await c.until(() => (c.events(s).filter((m) => m.type === 'context_compacted').length === 2 ? true : undefined));
    expect(pageErrors.get(page)).toEqual([]);
    await page.close();
  });
});
