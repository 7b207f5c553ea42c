/**
 * The bundled client against a real daemon at its limits: a frame over the protocol's
 * limit is never sent, and a server frame larger than the client takes ends the
 * connection with a typed error and no reconnect loop (resuming would start at the same
 * frame again).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LIMITS } from '../protocol/index.js';
import { AgentdClient } from '../src/client/client.js';
import type { ClientState } from '../src/client/events.js';
import { FrameTooLargeError, UnreadableFrameError } from '../src/client/errors.js';
import { startDaemon, type Daemon } from './helpers/daemon.js';
import { waitFor } from './helpers/tui.js';

let daemon: Daemon;
beforeAll(async () => {
  daemon = await startDaemon({ config: { approval_policy: 'auto' } });
});
afterAll(async () => {
  await daemon.stop();
});

describe('a client frame over the protocol limit', () => {
  it('is refused with FrameTooLargeError before it is sent; the connection stays', async () => {
    const client = new AgentdClient({ url: daemon.wsUrl, token: daemon.token ?? undefined });
    const states: ClientState[] = [];
    client.events.on('state', (s) => states.push(s));
    try {
      await client.start();
      const { session_id } = await client.createSession({});
      const huge = 'y'.repeat(LIMITS.frameMaxBytes + 1);
      const err = await client.submit(session_id, { id: 'huge-1', op: { type: 'message', text: huge } }).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(FrameTooLargeError);
      expect((err as FrameTooLargeError).retryable).toBe(false);
      expect((err as Error).message).toMatch(/frame too large: \d+ bytes, the limit is 4194304/);
      // The daemon never saw it: the connection is the same one, and still answers.
      await new Promise((r) => setTimeout(r, 100));
      expect(client.connected).toBe(true);
      expect(states.map((s) => s.kind)).toEqual(['connecting', 'connected']);
      await expect(client.submit(session_id, { id: 'small-1', op: { type: 'message', text: 'hi' } })).resolves.toMatchObject({
        type: 'queued',
      });
    } finally {
      client.close();
    }
  });
});

describe('a server frame over the client limit', () => {
  it('is reported as UnreadableFrameError and never retried', async () => {
    const opts = { url: daemon.wsUrl, token: daemon.token ?? undefined, backoff: { initialMs: 20, maxMs: 50, jitter: 0 } };
    const setup = new AgentdClient(opts);
    await setup.start();
    const { session_id } = await setup.createSession({});
    setup.close();

    const client = new AgentdClient({ ...opts, maxFrameBytes: 4096 });
    const states: ClientState[] = [];
    client.events.on('state', (s) => states.push(s));
    try {
      await client.start();
      await client.attach(session_id, { replayBatches: 0 });
      // The echoed user_message alone is over 4 KiB.
      await client.submit(session_id, { id: 'big-1', op: { type: 'message', text: 'x'.repeat(6000) } });
      await waitFor(() => client.currentState.kind === 'closed', 'the client to give up');
      const closed = client.currentState as Extract<ClientState, { kind: 'closed' }>;
      expect(closed.failure).toBeInstanceOf(UnreadableFrameError);
      expect(closed.failure!.retryable).toBe(false);
      expect((closed.failure as UnreadableFrameError).wsCode).toBe('WS_ERR_UNSUPPORTED_MESSAGE_LENGTH');
      expect(closed.error).toMatch(/cannot take.*limit 4096 bytes/);
      // Give a reconnect loop time to show itself: there must be none.
      await new Promise((r) => setTimeout(r, 300));
      expect(states.filter((s) => s.kind === 'reconnecting')).toEqual([]);
      await expect(client.waitConnected()).rejects.toBeInstanceOf(UnreadableFrameError);
    } finally {
      client.close();
    }
  });
});
