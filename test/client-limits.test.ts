/**
 * The bundled client against a real daemon at its limits: a server frame larger than the
 * client takes ends the connection with a typed error and no reconnect loop (resuming
 * would start at the same frame again).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AgentdClient } from '../src/client/client.js';
import type { ClientState } from '../src/client/events.js';
import { UnreadableFrameError } from '../src/client/errors.js';
import { startDaemon, type Daemon } from './helpers/daemon.js';
import { waitFor } from './helpers/tui.js';

let daemon: Daemon;
beforeAll(async () => {
  daemon = await startDaemon({ config: { approval_policy: 'auto' } });
});
afterAll(async () => {
  await daemon.stop();
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
