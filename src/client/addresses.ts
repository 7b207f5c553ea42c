/**
 * The daemon addresses a client may connect to, and the order to try them in. A client is
 * given one or more URLs (`--url` repeated or comma-separated, `AGENTD_URL=a,b`); in
 * cluster mode each connection also learns the live nodes (`list_nodes`, docs/cluster.md)
 * so that when its node dies it goes to another one, even one it was never given.
 *
 * Order: the address of the last good connection first, then the given ones, then the
 * learned ones; an address whose connection failed or dropped goes to the end until a
 * connection to it works again. Used by AgentdClient (client.ts); any other client (the
 * ACP bridge, a script) can use it the same way: `parseUrlList`, then `candidates()`, and
 * `connected` / `failed` / `learn` as connections go.
 */
import type { NodeInfo } from '../../protocol/index.js';
import { normalizeUrl } from './handshake.js';

/**
 * Split URL options (repeated and/or comma-separated) into one list: blanks dropped,
 * duplicates (after normalising: `http:` → `ws:`, the `/v1` path) removed, order kept.
 * Throws on a value that is not a URL.
 */
export function parseUrlList(values: string | readonly string[] | undefined): string[] {
  const list = values === undefined ? [] : typeof values === 'string' ? [values] : values;
  const out: string[] = [];
  for (const value of list) {
    for (const part of value.split(',')) {
      const text = part.trim();
      if (text === '') continue;
      const url = normalizeUrl(text);
      if (!out.includes(url)) out.push(url);
    }
  }
  return out;
}

export class DaemonAddresses {
  private given: string[];
  private learned: string[] = [];
  private lastGood: string | null = null;
  /** Addresses whose last connection failed or dropped (tried last). */
  private readonly suspect = new Set<string>();

  /** `given`: at least one URL (normalised here). */
  constructor(given: readonly string[]) {
    this.given = parseUrlList(given);
    if (this.given.length === 0) throw new Error('no daemon address given');
  }

  /** Replace the given addresses (e.g. re-read from daemon.json before a reconnect). */
  setGiven(urls: readonly string[]): void {
    const next = parseUrlList(urls);
    if (next.length > 0) this.given = next;
  }

  /** Every known address: given, then learned. */
  all(): string[] {
    return unique([...this.given, ...this.learned]);
  }

  /** The addresses learned from the cluster (the live nodes at the last `list_nodes`). */
  learnedAddresses(): readonly string[] {
    return this.learned;
  }

  /** The order to try now. */
  candidates(): string[] {
    const all = unique([...(this.lastGood ? [this.lastGood] : []), ...this.given, ...this.learned]);
    return [...all.filter((u) => !this.suspect.has(u)), ...all.filter((u) => this.suspect.has(u))];
  }

  /** A connection to `url` was opened. */
  connected(url: string): void {
    const u = normalizeUrl(url);
    this.lastGood = u;
    this.suspect.delete(u);
  }

  /** Connecting to `url` failed, or its connection dropped: try the others first. */
  failed(url: string): void {
    this.suspect.add(normalizeUrl(url));
  }

  /**
   * The live nodes as a node answered `list_nodes` (replacing what was learned before).
   * A URL that cannot be parsed is skipped.
   */
  learn(nodes: readonly NodeInfo[]): void {
    const urls: string[] = [];
    for (const n of nodes) {
      try {
        urls.push(normalizeUrl(n.url));
      } catch {
        /* not a URL: skip it */
      }
    }
    this.learned = unique(urls);
  }
}

function unique(urls: readonly string[]): string[] {
  return [...new Set(urls)];
}
