/**
 * The web UI's serving and its daemon-side pieces, without a browser: the page and its
 * assets with CSP and caching headers, revalidation, methods, `list_models`, and
 * `agentd open`'s URL.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connect } from './helpers/client.js';
import { ROOT, runAgentd, startDaemon, type Daemon } from './helpers/daemon.js';

let d: Daemon;

beforeAll(async () => {
  d = await startDaemon({
    config: {
      models: {
        default: 'alt',
        routes: {
          alt: { provider: 'scripted' },
          big: { provider: 'scripted', model: 'big-model', context_window: 128000, reasoning_efforts: ['low', 'high'] },
        },
      },
    },
  });
});
afterAll(async () => {
  await d?.stop();
});

describe('static serving', () => {
  it('serves the page at / with a strict CSP, no-cache and an ETag', async () => {
    const res = await fetch(`${d.httpUrl}/`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('text/html; charset=utf-8');
    const csp = res.headers.get('content-security-policy') ?? '';
    expect(csp).toContain("default-src 'none'");
    expect(csp).toContain("script-src 'self'");
    expect(csp).toContain("connect-src 'self'");
    expect(csp).toContain("frame-ancestors 'none'");
    expect(csp).not.toContain('unsafe-inline');
    expect(csp).not.toContain('unsafe-eval');
    expect(res.headers.get('cache-control')).toBe('no-cache');
    expect(res.headers.get('x-content-type-options')).toBe('nosniff');
    expect(res.headers.get('referrer-policy')).toBe('no-referrer');
    const etag = res.headers.get('etag');
    expect(etag).toMatch(/^".+"$/);
    const html = await res.text();
    expect(html).toContain('<div id="app">');
    // No inline script and nothing from another host.
    expect(html).not.toMatch(/<script(?![^>]*\bsrc=)[^>]*>/);
    for (const m of html.matchAll(/(?:src|href)="([^"]+)"/g)) expect(m[1]).toMatch(/^\/(?!\/)/);

    const again = await fetch(`${d.httpUrl}/`, { headers: { 'if-none-match': etag! } });
    expect(again.status).toBe(304);
    expect(await again.text()).toBe('');
  });

  it('serves hashed assets as immutable, with the same security headers', async () => {
    const html = await (await fetch(`${d.httpUrl}/`)).text();
    const script = /<script[^>]*src="(\/assets\/[^"]+\.js)"/.exec(html)?.[1];
    const style = /<link[^>]*href="(\/assets\/[^"]+\.css)"/.exec(html)?.[1];
    expect(script).toBeDefined();
    expect(style).toBeDefined();
    for (const [path, type] of [
      [script!, 'text/javascript; charset=utf-8'],
      [style!, 'text/css; charset=utf-8'],
    ] as const) {
      const res = await fetch(`${d.httpUrl}${path}`);
      expect(res.status).toBe(200);
      expect(res.headers.get('content-type')).toBe(type);
      expect(res.headers.get('cache-control')).toBe('public, max-age=31536000, immutable');
      expect(res.headers.get('content-security-policy')).toContain("default-src 'none'");
      const body = await res.text();
      expect(body.length).toBeGreaterThan(100);
    }
    // The bundle loads nothing from other hosts and carries no zod.
    const js = await (await fetch(`${d.httpUrl}${script!}`)).text();
    expect(js).not.toMatch(/https?:\/\/(?!www\.w3\.org\/)[a-z0-9.-]+/i);
    expect(js).not.toContain('ZodError');
  });

  it('answers HEAD without a body, other methods 405, unknown paths 404', async () => {
    const head = await fetch(`${d.httpUrl}/`, { method: 'HEAD' });
    expect(head.status).toBe(200);
    expect(Number(head.headers.get('content-length'))).toBeGreaterThan(0);
    const post = await fetch(`${d.httpUrl}/`, { method: 'POST', body: 'x' });
    expect(post.status).toBe(405);
    expect(post.headers.get('allow')).toBe('GET, HEAD');
    expect((await fetch(`${d.httpUrl}/../package.json`)).status).toBe(404);
    expect((await fetch(`${d.httpUrl}/assets/nope.js`)).status).toBe(404);
    expect((await fetch(`${d.httpUrl}/index.html.map`)).status).toBe(404);
    // /healthz and /v1 are unchanged.
    expect((await fetch(`${d.httpUrl}/healthz`)).status).toBe(200);
    expect((await fetch(`${d.httpUrl}/v1`)).status).toBe(426);
  });
});

describe('a daemon whose web UI is not built', () => {
  it('answers / with 503 and a hint, other paths as before', async () => {
    const { mkdtempSync, rmSync } = await import('node:fs');
    const { tmpdir } = await import('node:os');
    const { createServer } = await import('node:http');
    const { loadWebAssets, webHandler } = await import('../src/server/web.js');
    const { httpHandler, pathOf } = await import('../src/server/http.js');
    const empty = mkdtempSync(join(tmpdir(), 'agentd-noweb-'));
    const assets = loadWebAssets(empty);
    expect(assets.ok).toBe(false);
    const serve = webHandler(assets);
    const server = createServer(httpHandler(() => null, () => ({}), [(req, res) => serve(req, res, pathOf(req))]));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const base = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
    try {
      const res = await fetch(`${base}/`);
      expect(res.status).toBe(503);
      expect(await res.text()).toContain('npm run build');
      expect(res.headers.get('cache-control')).toBe('no-store');
      expect((await fetch(`${base}/assets/x.js`)).status).toBe(404);
      expect((await fetch(`${base}/healthz`)).status).toBe(200);
    } finally {
      server.close();
      rmSync(empty, { recursive: true, force: true });
    }
  });
});

describe('list_models', () => {
  it('answers the default route and every route with context window and efforts', async () => {
    const c = await connect(d);
    const answer = await c.ok({ type: 'list_models' });
    expect(c.invalid).toEqual([]);
    expect(answer).toEqual({
      type: 'models',
      req_id: answer.req_id,
      default: 'alt',
      routes: [
        { route: 'scripted', provider: 'scripted', model: 'scripted', context_window: null, reasoning_efforts: [] },
        { route: 'alt', provider: 'scripted', model: 'alt', context_window: null, reasoning_efforts: [] },
        { route: 'big', provider: 'scripted', model: 'big-model', context_window: 128000, reasoning_efforts: ['low', 'high'] },
      ],
    });
    const bad = await c.request({ type: 'list_models', extra: 1 });
    expect(bad).toMatchObject({ type: 'error', code: 'invalid_frame', req_id: bad.req_id });
    c.close();
  });

  it('is in the published JSON Schema', () => {
    const schema = readFileSync(join(ROOT, 'protocol', 'schema.json'), 'utf8');
    expect(schema).toContain('"list_models"');
    expect(schema).toContain('"reasoning_efforts"');
  });
});

describe('agentd open', () => {
  it('prints the page URL with the token and session in the fragment', async () => {
    const r = await runAgentd(['open', 'S1', '--data-dir', d.dataDir, '--no-browser']);
    expect(r.code).toBe(0);
    expect(r.stdout).toBe(`${d.httpUrl}/#token=${encodeURIComponent(d.token!)}&session=S1\n`);
    const plain = await runAgentd(['open', '--data-dir', d.dataDir], { DISPLAY: undefined, WAYLAND_DISPLAY: undefined, BROWSER: undefined });
    expect(plain.code).toBe(0);
    expect(plain.stdout).toBe(`${d.httpUrl}/#token=${encodeURIComponent(d.token!)}\n`);
    // The page it names is the UI.
    expect((await fetch(plain.stdout.trim())).status).toBe(200);
  });

  it('on a desktop starts the browser with the URL ($BROWSER)', async () => {
    const out = join(d.dataDir, 'browser-arg.txt');
    const fake = join(d.dataDir, 'fake-browser.sh');
    const { writeFileSync, chmodSync, existsSync } = await import('node:fs');
    writeFileSync(fake, `#!/bin/sh\nprintf '%s' "$1" > '${out}'\n`);
    chmodSync(fake, 0o755);
    const r = await runAgentd(['open', '--data-dir', d.dataDir], { BROWSER: fake });
    expect(r.code).toBe(0);
    const deadline = Date.now() + 5000;
    while (!existsSync(out) && Date.now() < deadline) await new Promise((res) => setTimeout(res, 50));
    expect(readFileSync(out, 'utf8')).toBe(r.stdout.trim());
  });

  it('fails with a hint when no daemon runs for the data dir', async () => {
    const r = await runAgentd(['open', '--data-dir', join(d.dataDir, 'none')]);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('agentd serve');
    expect(r.stdout).toBe('');
  });
});
