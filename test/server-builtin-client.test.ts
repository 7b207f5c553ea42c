/**
 * A client written from docs/protocol.md alone, with Node's built-in WebSocket (no `ws`,
 * no code of ours), against a real daemon: find it through the data dir, hello, create,
 * attach, submit, follow the turn, reconnect with after_sequence.
 */
import { spawnSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, test } from 'vitest';
import { startDaemon, type Daemon } from './helpers/daemon.js';

let d: Daemon;
beforeAll(async () => {
  d = await startDaemon({ config: { approval_policy: 'auto' } });
});
afterAll(async () => {
  await d.stop();
});

const CLIENT = String.raw`
import { readFileSync } from 'node:fs';
const dir = process.argv[2];
const { url } = JSON.parse(readFileSync(dir + '/daemon.json', 'utf8'));
const token = readFileSync(dir + '/token', 'utf8').trim();

function open(path) {
  const ws = new WebSocket(url + path);
  const frames = [];
  let wake = () => {};
  ws.onmessage = (m) => { frames.push(JSON.parse(m.data)); wake(); };
  const until = (pred) => new Promise((resolve, reject) => {
    const t = setTimeout(() => reject(new Error('timeout; got ' + JSON.stringify(frames.slice(-3)))), 10000);
    const check = () => { const f = frames.find(pred); if (f) { clearTimeout(t); resolve(f); } else wake = check; };
    check();
  });
  return new Promise((resolve) => { ws.onopen = () => resolve({ ws, frames, until, send: (f) => ws.send(JSON.stringify(f)) }); });
}

const a = await open('/v1?token=' + encodeURIComponent(token));
a.send({ type: 'hello', protocol: 1, client: 'builtin/1.0' });
const welcome = await a.until((f) => f.type === 'welcome');
a.send({ type: 'create_session', req_id: 'c1', config: { title: 'from the doc' } });
const { session } = await a.until((f) => f.req_id === 'c1');
a.send({ type: 'attach', req_id: 'a1', session_id: session.session_id });
await a.until((f) => f.type === 'attached');
a.send({ type: 'submit', session_id: session.session_id, submission: { id: 'msg-1', op: { type: 'message', text: 'hi there' } } });
const queued = await a.until((f) => f.type === 'queued');
const admitted = await a.until((f) => f.type === 'admitted');
const done = await a.until((f) => f.type === 'batch' && f.events.some((e) => e.msg.type === 'turn_complete'));
const seen = a.frames.filter((f) => f.type === 'batch').map((f) => f.sequence);
a.ws.close();

// Reconnect after the first batch seen: exactly the rest comes back.
const b = await open('/v1');
b.send({ type: 'hello', protocol: 1, client: 'builtin/1.0', token });
await b.until((f) => f.type === 'welcome');
b.send({ type: 'attach', req_id: 'a2', session_id: session.session_id, after_sequence: seen[0] });
await b.until((f) => f.type === 'batch' && f.sequence === done.sequence);
const replayed = b.frames.filter((f) => f.type === 'batch').map((f) => f.sequence);
b.ws.close();
const reply = a.frames.filter((f) => f.type === 'batch').flatMap((f) => f.events).find((e) => e.msg.type === 'agent_message').msg.text;
console.log(JSON.stringify({ welcome: welcome.type, title: session.title, queued: queued.ingress_seq, admitted: admitted.outcome, reply, seen, replayed }));
`;

test("Node's built-in WebSocket client works from the documentation alone", () => {
  const file = join(d.dataDir, 'client.mjs');
  writeFileSync(file, CLIENT);
  const r = spawnSync(process.execPath, ['--experimental-websocket', '--no-warnings', file, d.dataDir], { encoding: 'utf8', timeout: 30_000 });
  expect(r.stderr).toBe('');
  const out = JSON.parse(r.stdout.trim());
  expect(out).toMatchObject({ welcome: 'welcome', title: 'from the doc', queued: 1, admitted: 'accepted', reply: 'echo: hi there' });
  expect(out.replayed).toEqual(out.seen.slice(1));
});
