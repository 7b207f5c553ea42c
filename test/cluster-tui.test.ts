/**
 * The terminal UI in cluster mode (docs/cluster.md "Clients and failover"): `agentd attach`
 * in tmux given only node a's URL learns the live nodes; when a, which owns the session,
 * is killed (-9) in the middle of a turn, the TUI reconnects to another node, and the turn
 * that node took over finishes on screen with every line once. Three real daemons on a
 * real PostgreSQL. Skipped without PostgreSQL or tmux.
 */
import { describe, expect, test } from 'vitest';
import { havePostgres, POSTGRES_MISSING, startCluster, usePostgres } from './helpers/cluster.js';
import { BIN, ROOT, tempDataDir } from './helpers/daemon.js';
import { cleanup } from './helpers/session.js';
import { Tmux, hasTmux } from './helpers/tui.js';

const pg = usePostgres();
const runnable = havePostgres && hasTmux();

/** Rows of the screen matching a pattern. */
const count = (screen: string[], re: RegExp) => screen.filter((l) => re.test(l)).length;

describe.runIf(runnable)('agentd attach on a cluster', () => {
  test('follows a kill -9 of its node to a live one; the taken-over turn finishes on screen, every line once', async () => {
    const cl = await startCluster(pg(), { config: { approval_policy: 'auto' } });
    const a = cl.node('a');
    const c = await cl.connect(a);
    const cwd = tempDataDir('agentd-cwd-');
    const tmux = new Tmux('cluster', 100, 40);
    try {
      const aUrl = a.url;
      const sid = (await c.createSession({ cwd })).session_id as string;
      await cl.waitOwned((o) => o.a === 1, 15_000, 'node a to own the session');
      tmux.start(`node ${BIN} attach ${sid} --url ${aUrl} --token ${cl.token}`, { cwd: ROOT });
      await tmux.waitForText('Message the agent', 20_000);
      await tmux.waitForText(/● ready/);
      tmux.type('hello cluster');
      tmux.keys('Enter');
      await tmux.waitForText('● echo: hello cluster');
      await tmux.waitForText(/● ready/);
      await new Promise((r) => setTimeout(r, 300)); // its list_nodes answered

      // A long turn; kill -9 the node that owns the session while it streams.
      tmux.type('!sleep 4000');
      tmux.keys('Enter');
      await tmux.waitForText(/working .*esc to interrupt/);
      await tmux.waitForText(/^ ● sl/m);
      await a.kill9();
      await tmux.waitForText(/reconnecting/, 15_000);
      await tmux.waitForText(/✓ reconnected to ws:\/\/127\.0\.0\.1:\d+/, 40_000);
      await tmux.waitForText('turn resumed after a daemon restart or takeover', 40_000);
      await tmux.waitForText(/^ ● slept$/m, 40_000);
      await tmux.waitForText(/── done in/);
      await tmux.waitForText(/● ready/);
      const moved = /✓ reconnected to (\S+)/.exec(tmux.text())![1]!;
      expect(moved.startsWith(aUrl)).toBe(false);
      expect(cl.live().some((n) => moved.startsWith(n.url))).toBe(true);

      // The session works on the new node.
      tmux.type('after failover');
      tmux.keys('Enter');
      await tmux.waitForText('● echo: after failover', 20_000);
      await tmux.waitForText(/● ready/);

      const screen = tmux.screen();
      const expected: [RegExp, number][] = [
        [/^ › hello cluster$/, 1],
        [/^ ● echo: hello cluster$/, 1],
        [/^ › !sleep 4000$/, 1],
        [/reconnected to /, 1],
        [/turn resumed after a daemon restart or takeover/, 1],
        [/^ ● slept$/, 1],
        [/^ › after failover$/, 1],
        [/^ ● echo: after failover$/, 1],
        [/^ ── done in /, 3],
      ];
      for (const [re, n] of expected) expect(count(screen, re), `${re} in\n${screen.join('\n')}`).toBe(n);
      const order = ['hello cluster', '!sleep 4000', 'after failover'].map((t) => screen.findIndex((l) => l === ` › ${t}`));
      expect([...order].sort((x, y) => x - y)).toEqual(order);
    } catch (err) {
      throw new Error(`${(err as Error).message}\n--- screen ---\n${tmux.text()}\n--- logs ---\n${cl.logs().slice(-4000)}`);
    } finally {
      tmux.kill();
      cleanup(cwd);
    }
  }, 120_000);
});

describe.skipIf(runnable)('agentd attach on a cluster', () =>
  test.skip(`skipped: ${havePostgres ? 'tmux is not installed' : POSTGRES_MISSING}`, () => {}),
);
