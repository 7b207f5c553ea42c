/**
 * Queued messages are stored once (docs/architecture.md "Queued messages"): 40 queued
 * messages of 256 KiB behind a chatty shell command, then its ~50 commits, write well
 * under 96 MiB in all (the daemon's own write syscalls, /proc/PID/io), `list_sessions`
 * keeps answering within 200 ms (nine probes in ten), and after a kill -9 the queue's
 * texts come back from their own rows and every queued turn runs with its text.
 */
import { readFileSync } from 'node:fs';
import { afterEach, expect, test } from 'vitest';
import { connect, type TestClient } from './helpers/client.js';
import { startDaemon, tempDataDir, type Daemon } from './helpers/daemon.js';
import { cleanup, tempDir } from './helpers/session.js';

const daemons: Daemon[] = [];
const clients: TestClient[] = [];
const dirs: string[] = [];
afterEach(async () => {
  for (const c of clients.splice(0)) await c.close().catch(() => {});
  for (const d of daemons.splice(0)) await d.stop('SIGKILL').catch(() => {});
  dirs.splice(0).forEach(cleanup);
});

/** Bytes the process has passed to write(2) and friends so far (files, WAL, sockets). */
function bytesWritten(pid: number): number {
  const io = readFileSync(`/proc/${pid}/io`, 'utf8');
  return Number(/^wchar: (\d+)$/m.exec(io)![1]);
}

const MiB = 1024 * 1024;
const QUEUED = 40;
const TEXT_BYTES = 256 * 1024;

test('40 queued 256 KiB messages behind a chatty command: written once, list_sessions stays fast, texts survive kill -9', async () => {
  const dataDir = tempDataDir();
  const cwd = tempDir('agentd-queue-');
  dirs.push(dataDir, cwd);
  const config = { approval_policy: 'auto', journal: { group_commit_ms: 2 } };
  const d = await startDaemon({ dataDir, config });
  daemons.push(d);
  const c = await connect(d);
  clients.push(c);
  const s = (await c.createSession({ approval_policy: 'auto', cwd })).session_id as string;
  await c.attach(s, { replay_batches: 0 });
  // One line every 80 ms: each line a commit of its own (group commit 2 ms), ~50 of them.
  const chatty = await c.submitMessage(s, '!sh sleep 0.5; for i in $(seq 1 50); do echo line $i; sleep 0.08; done; sleep 30');
  await c.waitForEvent(s, (m) => m.type === 'tool_call_begin');
  const before = bytesWritten(d.pid);
  // Each queued message asks for a shell call whose command is the rest of its text.
  const textOf = (i: number) => `!sh exit 0 # queued ${i} ` + String.fromCharCode(97 + (i % 26)).repeat(TEXT_BYTES - 32);
  const ids: string[] = [];
  for (let i = 0; i < QUEUED; i++) ids.push(await c.submitMessage(s, textOf(i), `q-${i}`));
  // Probe list_sessions while the command runs and commits.
  const probes: number[] = [];
  while (probes.length < 10) {
    const t0 = performance.now();
    await c.request({ type: 'list_sessions', limit: 50 });
    probes.push(performance.now() - t0);
    await new Promise((r) => setTimeout(r, 150));
  }
  await c.waitForEvent(s, (m) => m.type === 'exec_output_delta' && /line 50\n/.test(String(m.chunk ?? m.delta ?? '')), 30_000);
  const written = bytesWritten(d.pid) - before;
  // The texts alone are 10 MiB: once on their admission rows, once in their user_message
  // events (each also copied from the WAL into the database file), once to this client.
  expect(written, `bytes written: ${(written / MiB).toFixed(1)} MiB`).toBeLessThan(96 * MiB);
  probes.sort((a, b) => a - b);
  expect(probes[8], `list_sessions probes (ms): ${probes.map((p) => p.toFixed(0)).join(' ')}`).toBeLessThan(200);

  // kill -9 with the whole queue waiting: the texts come back from their rows, each turn
  // runs its own text.
  await d.stop('SIGKILL');
  const d2 = await startDaemon({ dataDir, config });
  daemons.push(d2);
  const c2 = await connect(d2);
  clients.push(c2);
  // The restart recovers the chatty turn (its command is not run again) and the queue runs
  // on: attach from the start to see every turn, whenever it ran.
  await c2.attach(s, { after_sequence: 0 });
  const last = await c2.waitTurnEnd(s, ids[QUEUED - 1]!, 120_000);
  // (A 256 KiB command is past the kernel's 128 KiB bound on one argument: the shell
  // answers E2BIG. What matters here is that each turn got its own whole text.)
  expect(last.type).toBe('turn_complete');
  const begins = c2.events(s).filter((m) => m.type === 'tool_call_begin').map((m) => (m.arguments as { command: string }).command).filter((cmd) => cmd.startsWith('exit 0 # queued'));
  expect(begins).toEqual(ids.map((_, i) => textOf(i).slice('!sh '.length)));
}, 240_000);
