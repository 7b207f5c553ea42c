/**
 * Markdown in the web UI, in headless Chromium against a real daemon (the scripted
 * model's `!say TEXT` replies TEXT exactly): a heading, a table, a highlighted code block
 * whose Copy button puts the code on the clipboard, a task list, strikethrough and a safe
 * link; and hostile model text — `<img onerror>`, `<script>`, `javascript:` links, a remote
 * image — stays inert text: nothing runs, nothing is fetched. Screenshots in light and
 * dark go to test-results/web/ (docs/img/web-markdown-*.png are copies of them).
 */
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connect, type TestClient } from './helpers/client.js';
import { startDaemon, type Daemon } from './helpers/daemon.js';
import { HAVE_CHROMIUM, launchBrowser, openUi, pageErrors, shot, type Browser } from './helpers/browser.js';

const T = 15_000;

const CODE = "import { readFile } from 'node:fs/promises';\n\n// count the lines of a file\nexport async function lines(path: string): Promise<number> {\n  const text = await readFile(path, 'utf8');\n  return text.split('\\n').length;\n}";

const REPLY = [
  '## Done: the parser is fixed',
  '',
  'The **lexer** now keeps `raw` text, and ~~the old workaround~~ is gone. See [the notes](https://example.com/notes).',
  '',
  '| file | change | tests |',
  '|:-----|:-------|------:|',
  '| `lexer.ts` | keeps raw text | 12 |',
  '| `render.ts` | escapes HTML | 7 |',
  '',
  '```ts',
  CODE,
  '```',
  '',
  '- [x] fix the lexer',
  '- [x] add tests',
  '- [ ] update the changelog',
  '',
  '> Run `npm test` before merging.',
].join('\n');

const HOSTILE = [
  'Hostile text follows.',
  '',
  '<img src=x onerror="window.__pwned = 1">',
  '',
  'inline <script>window.__pwned = 2</script> and <b onmouseover="window.__pwned = 3">bold?</b>',
  '',
  '[click me](javascript:window.__pwned=4) and [data](data:text/html,<script>alert(1)</script>) and <javascript:alert(5)>',
  '',
  '![tracker](https://tracker.invalid/pixel.png) ![local](x.png)',
].join('\n');

describe.skipIf(!HAVE_CHROMIUM)('web UI: Markdown replies', () => {
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

  /** A session whose only reply is `text`, opened in a page. */
  async function replyPage(text: string, title: string): Promise<{ page: Page; id: string }> {
    const s = await c.createSession({ approval_policy: 'auto', title });
    const id = s.session_id as string;
    await c.attach(id);
    const sub = await c.submitMessage(id, `!say ${text}`);
    await c.waitTurnEnd(id, sub);
    const page = await openUi(b, d, { session: id });
    await page.locator('.msg.agent .md').first().waitFor({ timeout: T });
    return { page, id };
  }

  it('renders a heading, a table, a highlighted code block with a working Copy button and a task list', async () => {
    const { page } = await replyPage(REPLY, 'Markdown reply');
    const agent = page.locator('.msg.agent');
    expect(await agent.locator('h2').innerText()).toBe('Done: the parser is fixed');
    expect(await agent.locator('strong').first().innerText()).toBe('lexer');
    expect(await agent.locator('del').innerText()).toBe('the old workaround');
    expect(await agent.locator('p code').first().innerText()).toBe('raw');

    const link = agent.getByRole('link', { name: 'the notes' });
    expect(await link.getAttribute('href')).toBe('https://example.com/notes');
    expect(await link.getAttribute('target')).toBe('_blank');
    expect(await link.getAttribute('rel')).toBe('noopener noreferrer');

    const table = agent.locator('table');
    expect(await table.locator('th').allInnerTexts()).toEqual(['file', 'change', 'tests']);
    expect(await table.locator('tbody tr').count()).toBe(2);
    expect(await table.locator('tbody tr').first().locator('td').allInnerTexts()).toEqual(['lexer.ts', 'keeps raw text', '12']);
    expect(await table.locator('td.md-right').count()).toBe(2);

    // Highlighted once the highlighter chunk has loaded: keyword, string and comment spans.
    const code = agent.locator('.md-code code[data-highlighted="yes"]');
    await code.waitFor({ timeout: T });
    expect(await code.getAttribute('class')).toContain('language-ts');
    expect(await code.innerText()).toBe(CODE);
    expect(await code.locator('.hljs-keyword').count()).toBeGreaterThanOrEqual(4);
    expect(await code.locator('.hljs-string').first().innerText()).toBe("'node:fs/promises'");
    expect(await code.locator('.hljs-comment').innerText()).toBe('// count the lines of a file');
    // Highlighting colours the code (the stylesheet applies).
    const colors = await code.evaluate((el) => [getComputedStyle(el.querySelector('.hljs-keyword')!).color, getComputedStyle(el).color]);
    expect(colors[0]).not.toBe(colors[1]);

    await page.setViewportSize({ width: 1280, height: 1020 });
    await agent.evaluate((el) => el.scrollIntoView({ block: 'start' }));
    await shot(page, 'markdown-light');
    await page.emulateMedia({ colorScheme: 'dark' });
    await shot(page, 'markdown-dark');
    await page.emulateMedia({ colorScheme: 'light' });

    await b.context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: d.httpUrl });
    await page.evaluate(() => navigator.clipboard.writeText('before'));
    const copy = agent.getByRole('button', { name: 'Copy code' });
    await copy.click();
    await expect.poll(() => copy.innerText()).toBe('Copied');
    expect(await page.evaluate(() => navigator.clipboard.readText())).toBe(CODE);

    const tasks = agent.locator('ul.md-tasks li');
    expect(await tasks.count()).toBe(3);
    expect(await tasks.allInnerTexts()).toEqual(['fix the lexer', 'add tests', 'update the changelog']);
    const boxes = agent.locator('ul.md-tasks input[type="checkbox"]');
    expect(await boxes.evaluateAll((els) => els.map((e) => [(e as HTMLInputElement).checked, (e as HTMLInputElement).disabled]))).toEqual([
      [true, true],
      [true, true],
      [false, true],
    ]);
    expect(await agent.locator('blockquote').innerText()).toBe('Run npm test before merging.');

    // The user's own message is shown as typed, not as Markdown.
    expect(await page.locator('.msg.user .text').innerText()).toContain('## Done: the parser is fixed');
    expect(await page.locator('.msg.user h2').count()).toBe(0);

    expect(pageErrors.get(page)).toEqual([]);
    await page.close();
  });

  it('shows raw HTML, script, javascript: and data: links and images as inert text; loads nothing', async () => {
    const requests: string[] = [];
    const dialogs: string[] = [];
    const { page } = await replyPage(HOSTILE, 'Hostile reply');
    page.on('request', (r) => requests.push(r.url()));
    page.on('dialog', (dlg) => {
      dialogs.push(dlg.message());
      void dlg.dismiss();
    });
    const md = page.locator('.msg.agent .md');
    const text = await md.innerText();
    expect(text).toContain('<img src=x onerror="window.__pwned = 1">');
    expect(text).toContain('<script>');
    expect(text).toContain('</script>');
    expect(text).toContain('<b onmouseover="window.__pwned = 3">');
    expect(text).toContain('[click me](javascript:window.__pwned=4)');
    expect(text).toContain('[data](data:text/html,<script>alert(1)</script>)');
    expect(text).toContain('![local](x.png)');

    // Nothing of it became an element.
    for (const sel of ['img', 'script', 'b', 'iframe', '[onerror]', '[onmouseover]', 'a[href^="javascript:"]', 'a[href^="data:"]']) {
      expect(await md.locator(sel).count(), sel).toBe(0);
    }
    // Every link left is http(s) or mailto; the remote image is a link to it, not loaded.
    const hrefs = await md.locator('a').evaluateAll((els) => els.map((e) => e.getAttribute('href') ?? ''));
    expect(hrefs).toEqual(['https://tracker.invalid/pixel.png']);
    expect(await md.locator('a.md-image').innerText()).toBe('image: tracker');

    // Hover and click everything that looks active: nothing runs.
    await md.getByText('bold?').hover();
    await md.getByText('[click me](javascript:window.__pwned=4)').click();
    await md.getByText('<img src=x').click();
    expect(await page.evaluate(() => (window as { __pwned?: number }).__pwned)).toBeUndefined();
    expect(dialogs).toEqual([]);
    expect(requests.filter((u) => !u.startsWith(d.httpUrl))).toEqual([]);
    expect(requests.filter((u) => /x\.png|pixel/.test(u))).toEqual([]);
    expect(pageErrors.get(page)).toEqual([]);
    await page.close();
  });
});
