/**
 * The one check every HTTP request and WebSocket upgrade passes before any route
 * (docs/web.md, docs/protocol.md "Connecting" step 4):
 *
 * - `Host` must name the daemon: its bind address, `localhost`, `127.0.0.1`, `[::1]`
 *   (at the daemon's port, or without a port) or an entry of `server.allowed_hosts`
 *   (`name` at any port, or `name:port`) — else 403, which defeats DNS rebinding. A
 *   wildcard bind (`0.0.0.0`, `::`) is bound to every local address, so each address of
 *   the machine's interfaces counts as the bind address (IP literals only: a rebound DNS
 *   name is still refused).
 * - `Origin`, when present, must be the daemon's own origin — `http://NAME:PORT` for each
 *   of those names at the real port — or an entry of `server.allowed_origins` — else 403,
 *   which defeats cross-site WebSocket hijacking (a page elsewhere cannot drive the
 *   daemon with the user's network position, also under --no-auth).
 *
 * Routes (the protocol upgrade, /healthz, a static web UI) plug in behind `checkRequest`.
 */
import type { IncomingMessage } from 'node:http';
import { isIP } from 'node:net';
import { networkInterfaces } from 'node:os';

export interface RequestPolicy {
  /** The interface the daemon listens on, as configured (e.g. 127.0.0.1, ::1, localhost). */
  bindHost: string;
  /** The port actually bound. */
  port: number;
  /** `server.allowed_hosts`: extra names (`name` or `name:port`) this daemon answers to. */
  allowedHosts: readonly string[];
  /** `server.allowed_origins`: extra origins (e.g. `https://agentd.example.com`) allowed to connect. */
  allowedOrigins: readonly string[];
  /** The machine's addresses, for a wildcard bind (default: from its network interfaces). */
  localAddresses?: () => readonly string[];
}

const WILDCARDS: Record<string, 4 | 6> = { '0.0.0.0': 4, '::': 6, '[::]': 6 };

/** Addresses of this machine's interfaces (IPv4 only for family 4; both for 6, as `::` also takes IPv4). */
function interfaceAddresses(family: 4 | 6): string[] {
  const out: string[] = [];
  for (const list of Object.values(networkInterfaces())) {
    for (const a of list ?? []) if (family === 6 || a.family === 'IPv4') out.push(a.address);
  }
  return out;
}

export interface Refusal {
  status: 403;
  reason: string;
}

/** A host name as it appears in a URL: lower case, IPv6 literals in brackets. */
function urlHost(name: string): string {
  const h = name.toLowerCase();
  return isIP(h) === 6 ? `[${h}]` : h;
}

/** `{hostname, port}` of a Host header (port '' when absent), or null when malformed. */
function parseHost(value: string): { hostname: string; port: string } | null {
  if (value === '' || /[\s/?#@\\]/.test(value)) return null;
  try {
    const url = new URL(`http://${value}`);
    // URL drops :80 for http; keep "explicitly 80" distinguishable from "no port".
    const explicit = /:(\d+)$/.exec(value)?.[1];
    return { hostname: url.hostname, port: explicit !== undefined ? String(Number(explicit)) : '' };
  } catch {
    return null;
  }
}

/** The normalized origin of `value` (`scheme://host[:port]`), or the raw value (e.g. "null"). */
export function normalizeOrigin(value: string): string {
  try {
    const origin = new URL(value).origin;
    return origin === 'null' ? value : origin;
  } catch {
    return value;
  }
}

/** The names (with the port they must use, '' = any) the daemon answers to. */
function hostNames(policy: RequestPolicy): Array<{ hostname: string; port: string }> {
  const port = String(policy.port);
  const wildcard = WILDCARDS[policy.bindHost];
  const local = wildcard === undefined ? [] : (policy.localAddresses?.() ?? interfaceAddresses(wildcard));
  const own = [urlHost(policy.bindHost), 'localhost', '127.0.0.1', '[::1]', ...local.map(urlHost)].map((hostname) => ({
    hostname,
    port,
  }));
  const extra = policy.allowedHosts.map((entry) => parseHost(entry) ?? { hostname: urlHost(entry), port: '' });
  return [...own, ...extra];
}

/** 403 for a foreign `Host` or `Origin`; null when the request may go on to its route. */
export function checkRequest(req: IncomingMessage, policy: RequestPolicy): Refusal | null {
  const hostHeader = req.headers.host;
  const host = hostHeader === undefined ? null : parseHost(hostHeader);
  if (host === null) return { status: 403, reason: 'missing or malformed Host header' };
  const names = hostNames(policy);
  const own = String(policy.port);
  const hostOk = names.some(
    (n) => n.hostname === host.hostname && (host.port === '' || n.port === '' || host.port === n.port),
  );
  // Every allowed name served at the daemon's own port is the daemon's own origin.
  const namesWithPort = names.map((n) => ({ hostname: n.hostname, port: n.port === '' ? own : n.port }));
  if (!hostOk) return { status: 403, reason: `Host "${String(hostHeader).slice(0, 256)}" is not this daemon's` };

  const origin = req.headers.origin;
  if (origin === undefined) return null;
  const normalized = normalizeOrigin(origin);
  const ownOrigins = namesWithPort.map((n) => normalizeOrigin(`http://${n.hostname}:${n.port}`));
  if (ownOrigins.includes(normalized)) return null;
  if (policy.allowedOrigins.some((o) => normalizeOrigin(o) === normalized)) return null;
  return { status: 403, reason: `Origin "${origin.slice(0, 256)}" is not allowed` };
}
