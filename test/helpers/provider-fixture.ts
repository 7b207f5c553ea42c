/**
 * The per-test setup of a provider test: a fresh fake server and the API key variable for
 * each test, and builders of a route and a request pointing at that server.
 */
import { afterEach, beforeEach } from 'vitest';
import type { ModelRequest, ModelRoute } from '../../src/model/types.js';

export interface FakeServer {
  baseURL: string;
  close(): Promise<void>;
}

export interface ProviderFixture<F extends FakeServer> {
  /** The current test's server (a test may replace it; afterEach closes whatever is here). */
  fake: F;
  route(extra?: Partial<ModelRoute>): ModelRoute;
  request(extra?: Partial<ModelRequest>): ModelRequest;
}

/** Registers beforeEach/afterEach: `start()` a server and set `process.env[keyEnv] = secret`. */
export function useFakeProvider<F extends FakeServer>(
  start: () => Promise<F>,
  base: Pick<ModelRoute, 'route' | 'provider' | 'model' | 'context_window'>,
  keyEnv: string,
  secret: string,
): ProviderFixture<F> {
  const fixture: ProviderFixture<F> = {
    fake: undefined as unknown as F,
    route: (extra = {}) => ({ ...base, base_url: fixture.fake.baseURL, api_key_env: keyEnv, ...extra }),
    request: (extra = {}) => ({
      route: fixture.route(),
      reasoning_effort: null,
      context: [{ role: 'user', text: 'hi' }],
      tools: [],
      signal: new AbortController().signal,
      ...extra,
    }),
  };
  beforeEach(async () => {
    fixture.fake = await start();
    process.env[keyEnv] = secret;
  });
  afterEach(async () => {
    delete process.env[keyEnv];
    await fixture.fake.close();
  });
  return fixture;
}
