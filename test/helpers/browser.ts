/**
 * Headless Chromium for the web UI tests (playwright-core, the system's /usr/bin/chromium,
 * a fresh user-data-dir per launch). Tests skip with a clear message when Chromium is
 * absent; CI installs it (.ci/run).
 *
 *   const b = await launchBrowser();            // null when /usr/bin/chromium is missing
 *   const page = await openUi(b, daemon, { session: id });
 *   await shot(page, 'approval');               // test-results/web/approval.png
 */
import { existsSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium, type BrowserContext, type Page } from 'playwright-core';
import { ROOT, type Daemon } from './daemon.js';

export const CHROMIUM = '/usr/bin/chromium';
/**
 * Browser tests run when Chromium is installed. Under CI (where .ci/run installs it) they
 * always run, so a failed install is a failure, never a silent skip.
 */
export const HAVE_CHROMIUM = existsSync(CHROMIUM) || process.env.CI === 'true';
/** Where screenshots of the main states are written. */
export const SHOTS_DIR = join(ROOT, 'test-results', 'web');

const ARGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];

export interface Browser {
  context: BrowserContext;
  close(): Promise<void>;
}

/** Launch Chromium with a fresh profile; extra args e.g. --host-resolver-rules. */
export async function launchBrowser(extraArgs: string[] = []): Promise<Browser> {
  const profile = mkdtempSync(join(tmpdir(), 'agentd-chromium-'));
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: CHROMIUM,
    headless: true,
    args: [...ARGS, ...extraArgs],
    viewport: { width: 1280, height: 800 },
  });
  return {
    context,
    async close() {
      await context.close().catch(() => undefined);
      rmSync(profile, { recursive: true, force: true });
    },
  };
}

/** Errors the page threw or logged; a test asserts it stays empty. */
export const pageErrors = new WeakMap<Page, string[]>();

/** Open the UI as `agentd open` would: `/#token=T[&session=ID]`. */
export async function openUi(b: Browser, d: Pick<Daemon, 'httpUrl' | 'token'>, opts: { session?: string; width?: number } = {}): Promise<Page> {
  const page = await b.context.newPage();
  if (opts.width) await page.setViewportSize({ width: opts.width, height: 820 });
  const errors: string[] = [];
  pageErrors.set(page, errors);
  page.on('pageerror', (e) => errors.push(e.message));
  page.on('console', (m) => {
    if (m.type() === 'error' && !/WebSocket|ERR_CONNECTION_REFUSED|net::/.test(m.text())) errors.push(m.text());
  });
  const frag = new URLSearchParams();
  if (d.token) frag.set('token', d.token);
  if (opts.session) frag.set('session', opts.session);
  await page.goto(`${d.httpUrl}/#${frag.toString()}`);
  return page;
}

/** Save a screenshot of the page's current state. */
export async function shot(page: Page, name: string): Promise<string> {
  mkdirSync(SHOTS_DIR, { recursive: true });
  const path = join(SHOTS_DIR, `${name}.png`);
  await page.screenshot({ path });
  return path;
}

/** The batch sequences the transcript shows, in order (its `data-sequences`). */
export async function shownSequences(page: Page): Promise<number[]> {
  const attr = await page.locator('ol.items').getAttribute('data-sequences');
  return attr ? attr.split(',').map(Number) : [];
}
