/**
 * Static serving of the browser UI (docs/web.md) on the daemon's HTTP port: the files
 * Vite built into dist/web at install, read into memory once at start-up, served with a
 * strict Content-Security-Policy and caching headers. Only files found at start-up are
 * served (an exact map lookup: no path from a request ever reaches the file system).
 */
import { createHash } from 'node:crypto';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { dirname, extname, join, relative, sep } from 'node:path';
import { fileURLToPath } from 'node:url';

/** One file of the UI, ready to send. */
export interface WebAsset {
  body: Buffer;
  contentType: string;
  etag: string;
  /** Content-hashed name (under /assets/): cached for a year, never revalidated. */
  immutable: boolean;
}

/** The UI's files by URL path, or why there are none. */
export type WebAssets = { ok: true; files: Map<string, WebAsset> } | { ok: false; reason: string };

/**
 * The page may load scripts, styles, images and fonts from its own origin only, connect
 * only to its own origin (the /v1 WebSocket), and may not be framed.
 */
export const WEB_CSP = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data:",
  "font-src 'self'",
  "connect-src 'self'",
  "manifest-src 'self'",
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
].join('; ');

/** Headers of every UI response besides type and caching. */
const SECURITY_HEADERS: Record<string, string> = {
  'content-security-policy': WEB_CSP,
  'x-content-type-options': 'nosniff',
  'referrer-policy': 'no-referrer',
  'x-frame-options': 'DENY',
  'cross-origin-opener-policy': 'same-origin',
  'cross-origin-resource-policy': 'same-origin',
  'permissions-policy': 'camera=(), microphone=(), geolocation=()',
};

const TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.ico': 'image/x-icon',
  '.json': 'application/json; charset=utf-8',
  '.webmanifest': 'application/manifest+json',
  '.woff2': 'font/woff2',
  '.txt': 'text/plain; charset=utf-8',
};

/** dist/web of this package (this module is dist/src/server/web.js once built). */
export function defaultWebRoot(): string {
  return join(dirname(fileURLToPath(import.meta.url)), '..', '..', 'web');
}

function walk(dir: string, out: string[]): void {
  for (const name of readdirSync(dir)) {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) walk(path, out);
    else out.push(path);
  }
}

/** Read the built UI in `root`; a missing build is a value, not an exception. */
export function loadWebAssets(root: string): WebAssets {
  let paths: string[] = [];
  try {
    walk(root, paths);
  } catch {
    paths = [];
  }
  if (!paths.some((p) => relative(root, p) === 'index.html')) {
    return { ok: false, reason: `the web UI is not built (no ${join(root, 'index.html')}); run "npm run build"` };
  }
  const files = new Map<string, WebAsset>();
  for (const path of paths) {
    const rel = relative(root, path).split(sep).join('/');
    const contentType = TYPES[extname(path).toLowerCase()];
    if (!contentType || rel.endsWith('.map')) continue;
    const body = readFileSync(path);
    const etag = `"${createHash('sha256').update(body).digest('base64url').slice(0, 27)}"`;
    files.set(`/${rel}`, { body, contentType, etag, immutable: rel.startsWith('assets/') });
  }
  files.set('/', files.get('/index.html')!);
  return { ok: true, files };
}

function send(req: IncomingMessage, res: ServerResponse, status: number, headers: Record<string, string | number>, body: Buffer): void {
  res.writeHead(status, { ...SECURITY_HEADERS, ...headers });
  res.end(req.method === 'HEAD' ? undefined : body);
}

/**
 * The UI's request handler: true when it answered (a UI path), false to let the caller
 * answer 404. GET and HEAD only; `If-None-Match` revalidation answers 304.
 */
export function webHandler(assets: WebAssets) {
  return (req: IncomingMessage, res: ServerResponse, path: string): boolean => {
    const asset = assets.ok ? assets.files.get(path) : undefined;
    if (!asset && !(path === '/' && !assets.ok)) return false;
    if (req.method !== 'GET' && req.method !== 'HEAD') {
      send(req, res, 405, { allow: 'GET, HEAD', 'content-type': 'text/plain; charset=utf-8', 'cache-control': 'no-store' }, Buffer.from('method not allowed\n'));
      return true;
    }
    if (!asset) {
      const reason = assets.ok ? 'not found' : assets.reason;
      send(req, res, 503, { 'content-type': 'text/plain; charset=utf-8', 'cache-control': 'no-store' }, Buffer.from(`${reason}\n`));
      return true;
    }
    const caching = asset.immutable ? 'public, max-age=31536000, immutable' : 'no-cache';
    const headers = { 'content-type': asset.contentType, 'cache-control': caching, etag: asset.etag };
    if (req.headers['if-none-match'] === asset.etag) {
      send(req, res, 304, headers, Buffer.alloc(0));
      return true;
    }
    send(req, res, 200, { ...headers, 'content-length': asset.body.length }, asset.body);
    return true;
  };
}
