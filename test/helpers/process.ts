/** Helpers for tests that check real processes: liveness (zombies count as dead) and polling. */
import { readFileSync } from 'node:fs';
import { createServer } from 'node:net';

/** Alive and not a zombie (an orphan's zombie waits for init to reap it). */
export function alive(pid: number): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const state = stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3);
    return state !== 'Z' && state !== 'X';
  } catch {
    return false;
  }
}

/** Resolves once `cond()` holds; throws after `ms`. */
export async function waitUntil(cond: () => boolean, ms = 5000, what = 'condition'): Promise<void> {
  const until = Date.now() + ms;
  while (!cond()) {
    if (Date.now() > until) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

/** A TCP port free on 127.0.0.1 right now (for a server the test starts). */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.once('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const port = (srv.address() as { port: number }).port;
      srv.close(() => resolve(port));
    });
  });
}
