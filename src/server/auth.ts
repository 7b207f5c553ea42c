/**
 * Authentication of WebSocket clients (protocol.md "Connecting"): a token may come with
 * the upgrade request (`Authorization: Bearer T` or `?token=T`) and/or in `hello`.
 */
import { createHash, timingSafeEqual } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import { isIP } from 'node:net';

/** Tokens a client presented at upgrade time (undefined = not presented). */
export interface UpgradeCredentials {
  header?: string;
  query?: string;
  /** The Authorization header was present but not a Bearer token. */
  malformedHeader: boolean;
  /** `?token=` appeared more than once (which one would count is ambiguous: refused). */
  repeatedQuery?: boolean;
}

/** Read the credentials of an upgrade request. */
export function upgradeCredentials(req: IncomingMessage): UpgradeCredentials {
  const creds: UpgradeCredentials = { malformedHeader: false };
  const auth = req.headers.authorization;
  if (auth !== undefined) {
    const m = /^Bearer[ ]+(\S+)\s*$/i.exec(auth);
    if (m) creds.header = m[1]!;
    else creds.malformedHeader = true;
  }
  const query = new URL(req.url ?? '/', 'http://localhost').searchParams.getAll('token');
  if (query.length > 0) creds.query = query[0]!;
  if (query.length > 1) creds.repeatedQuery = true;
  return creds;
}

const digest = (s: string): Buffer => createHash('sha256').update(s, 'utf8').digest();

/** Constant-time comparison of two tokens. */
export function tokensEqual(a: string, b: string): boolean {
  return timingSafeEqual(digest(a), digest(b));
}

/**
 * Decide whether a client is authenticated. `expected` null means auth is disabled
 * (--no-auth). Otherwise every token the client presented must match, and at least one
 * must be presented.
 */
export function authenticate(
  expected: string | null,
  creds: UpgradeCredentials,
  helloToken: string | undefined,
): { ok: true } | { ok: false; message: string } {
  if (expected === null) return { ok: true };
  if (creds.malformedHeader) return { ok: false, message: 'Authorization header must be "Bearer TOKEN"' };
  if (creds.repeatedQuery) return { ok: false, message: 'the token query parameter must be given once' };
  const presented = [creds.header, creds.query, helloToken].filter((t): t is string => t !== undefined);
  if (presented.length === 0) return { ok: false, message: 'missing token' };
  for (const t of presented) {
    if (!tokensEqual(t, expected)) return { ok: false, message: 'wrong token' };
  }
  return { ok: true };
}

/** True for hosts that only accept local connections (127.0.0.0/8, ::1, localhost). */
export function isLoopbackHost(host: string): boolean {
  const h = host.replace(/^\[(.*)\]$/, '$1').toLowerCase();
  if (h === 'localhost' || h.endsWith('.localhost')) return true;
  const kind = isIP(h);
  if (kind === 4) return h.startsWith('127.');
  if (kind === 6) return h === '::1' || h === '0:0:0:0:0:0:0:1' || /^::ffff:127\./.test(h);
  return false;
}
