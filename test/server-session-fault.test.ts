/**
 * A session that stops itself after repeated journal failures tells its attached clients
 * (`error {code: "stopped"}`), and attaching again resumes it from its last checkpoint.
 * In-process host and server (to reach the journal connection), real WebSocket clients.
 */
import { pino } from 'pino';
import { afterEach, expect, test } from 'vitest';
import { parseConfig } from '../src/config/config.js';
import { startServer, type AgentdServer } from '../src/server/index.js';
import { SessionHost } from '../src/session/host.js';
import { connect, type TestClient } from './helpers/client.js';
import { cleanup, tempDir } from './helpers/session.js';

let host: SessionHost;
let server: AgentdServer;
let client: TestClient;
let dir: string;
afterEach(async () => {
  await client?.close();
  server.stopAccepting();
  await host.close();
  await server.close(1000);
  cleanup(dir);
});

test('attached clients learn that a faulted session stopped, and re-attaching resumes it', async () => {
  dir = tempDir();
  host = await SessionHost.open({ dataDir: dir, config: parseConfig({ approval_policy: 'auto' }) });
  server = await startServer({ sessions: host, host: '127.0.0.1', port: 0, token: null, serverName: 'agentd/test', logger: pino({ level: 'silent' }) });
  client = await connect({ wsUrl: `${server.url}/v1`, token: null });
  const s = (await client.createSession({ cwd: dir })).session_id as string;
  await client.attach(s);
  await client.submitMessage(s, '!sleep 400', 'long');
  await client.waitForEvent(s, (m) => m.type === 'turn_started');
  const seen = client.batches(s).length;

  host.journal.withDatabase((d) => d).pragma('query_only = ON'); // every commit fails from here on
  client.send({ type: 'submit', session_id: s, submission: { id: 'lost', op: { type: 'message', text: 'x' } } });
  const stopped = await client.waitFor((f) => f.type === 'error' && f.code === 'stopped', 5000, 'stopped');
  expect(stopped.message).toContain(s);
  expect(stopped.message).toMatch(/attach again/);
  const rejected = await client.waitFor((f) => f.type === 'error' && f.submission_id === 'lost', 5000, 'rejection');
  expect(rejected.code).toBe('internal');

  host.journal.withDatabase((d) => d).pragma('query_only = OFF');
  const last = client.batches(s).at(-1)!.sequence as number;
  await client.attach(s, { after_sequence: last });
  await client.waitForEvent(s, (m) => m.type === 'turn_complete' || m.type === 'turn_interrupted', 10_000);
  const batches = client.batches(s);
  expect(batches.length).toBeGreaterThan(seen);
  const seqs = batches.map((b) => b.sequence as number);
  expect(seqs).toEqual(seqs.map((_, i) => i + 1));
  expect(client.events(s).some((m) => m.type === 'turn_resumed')).toBe(true);
});
