/**
 * Many addresses (src/client/addresses.ts): the order addresses are tried in, what a
 * cluster's `nodes` answer teaches, and an AgentdClient given two daemons following the
 * loss of its daemon to the other one and resuming with after_sequence — no duplicate,
 * no gap (two in-process protocol servers sharing one session's journal, as a cluster's
 * nodes share PostgreSQL).
 */
import { afterEach, describe, expect, it } from 'vitest';
import type { BatchFrame } from '../protocol/index.js';
import { DaemonAddresses, parseUrlList } from '../src/client/addresses.js';
import { AgentdClient } from '../src/client/client.js';
import { echoTurn, FakeServer, waitFor } from './helpers/tui.js';

const servers: FakeServer[] = [];
const clients: AgentdClient[] = [];
afterEach(async () => {
  for (const c of clients.splice(0)) c.close();
  for (const s of servers.splice(0)) await s.stop().catch(() => undefined);
});

describe('DaemonAddresses', () => {
  it('parses repeated and comma-separated URLs, normalised and without duplicates', () => {
    expect(parseUrlList(['ws://a:1, ws://b:2', 'http://a:1/v1', ''])).toEqual(['ws://a:1/v1', 'ws://b:2/v1']);
    expect(parseUrlList(undefined)).toEqual([]);
    expect(() => parseUrlList('ws://[bad')).toThrow();
  });

  it('tries the last good address first, failed ones last, and learns live nodes', () => {
    const a = new DaemonAddresses(['ws://a:1', 'ws://b:2']);
    expect(a.candidates()).toEqual(['ws://a:1/v1', 'ws://b:2/v1']);
    a.connected('ws://b:2/v1');
    expect(a.candidates()[0]).toBe('ws://b:2/v1');
    a.learn([
      { node_id: 'n2', url: 'ws://b:2', self: true },
      { node_id: 'n3', url: 'ws://c:3', self: false },
    ]);
    expect(a.candidates()).toEqual(['ws://b:2/v1', 'ws://a:1/v1', 'ws://c:3/v1']);
    a.failed('ws://b:2/v1');
    expect(a.candidates()).toEqual(['ws://a:1/v1', 'ws://c:3/v1', 'ws://b:2/v1']);
    a.learn([{ node_id: 'n3', url: 'ws://c:3', self: true }]);
    expect(a.all()).toEqual(['ws://a:1/v1', 'ws://b:2/v1', 'ws://c:3/v1']);
    expect(() => new DaemonAddresses([])).toThrow();
  });
});

describe('AgentdClient with two daemons', () => {
  it('follows the loss of its daemon to the other address and resumes exactly after the last batch', async () => {
    const a = await FakeServer.start();
    const b = await FakeServer.start();
    servers.push(a, b);
    // One journal seen from two nodes: every commit goes to both.
    for (const s of [a, b]) s.addSession();
    const turn = echoTurn('failover');
    const commit = (events: (typeof turn)[number]) => {
      a.commitSilently('s1', events);
      b.commit('s1', events);
    };
    commit(turn[0]!);
    commit(turn[1]!);

    const client = new AgentdClient({
      url: a.url,
      addresses: new DaemonAddresses([a.url, b.url]),
      backoff: { initialMs: 20, maxMs: 50 },
      pingIntervalMs: 0,
    });
    clients.push(client);
    const got: BatchFrame[] = [];
    client.events.on('batch', (bf) => got.push(bf));
    await client.start();
    expect(client.currentUrl).toBe(`${a.url}/v1`);
    await client.attach('s1', { replayBatches: 100 });
    await waitFor(() => got.length === 2, 'the replay');

    await a.stop(); // the first daemon dies
    commit(turn[2]!); // meanwhile the session goes on
    commit(turn[3]!);
    await waitFor(() => got.length === 4, 'the batches after the failover');
    expect(client.currentUrl).toBe(`${b.url}/v1`);
    expect(got.map((x) => x.sequence)).toEqual([1, 2, 3, 4]);
    const resumed = b.received.find((r) => r.frame.type === 'attach');
    expect(resumed?.frame.after_sequence).toBe(2);
  });
});
