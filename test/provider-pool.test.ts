/** The openai provider's transport (httpFetch): concurrent model calls reuse pooled keep-alive connections. */
import { afterEach, beforeEach, expect, test } from 'vitest';
import { createOpenAIClient } from '../src/model/openai.js';
import type { ModelRequest } from '../src/model/types.js';
import { chunk, sse, startFakeOpenAI, type FakeOpenAI } from './helpers/fake-openai.js';
import { collect } from './helpers/model-stream.js';

let fake: FakeOpenAI;
beforeEach(async () => {
  fake = await startFakeOpenAI();
});
afterEach(() => fake.close());

const request = (): ModelRequest => ({
  route: { route: 'test', provider: 'openai', model: 'fake-model', base_url: fake.baseURL, context_window: null },
  context: [{ role: 'user', text: 'hi' }],
  tools: [],
  reasoning_effort: null,
  signal: new AbortController().signal,
});

test('rounds of concurrent calls run on as many connections as calls at once, reused round after round', async () => {
  const client = createOpenAIClient();
  const concurrent = 4;
  for (let round = 0; round < 3; round++) {
    for (let i = 0; i < concurrent; i++) fake.enqueue(sse([chunk.text(`r${round}`), chunk.finish('stop')], { delayMs: 20 }));
    const replies = await Promise.all(Array.from({ length: concurrent }, () => collect(client.stream(request()))));
    for (const r of replies) expect(r[0]).toEqual({ type: 'text_delta', delta: `r${round}` });
  }
  expect(fake.requests).toHaveLength(3 * concurrent);
  const connections = new Set(fake.requests.map((r) => r.remotePort));
  expect(connections.size).toBeLessThanOrEqual(concurrent);
});
