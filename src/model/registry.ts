/**
 * Picks the ModelClient for a route. Clients are stateless (keys and URLs are read per
 * request from the route), so one instance per provider is shared. A provider's module
 * (and its SDK) is loaded on that provider's first request, not at startup: a daemon that
 * never calls Anthropic never loads its SDK (docs/performance.md, item 11).
 */
import { scriptedModel } from './scripted.js';
import type { ModelChunk, ModelClient, ModelRequest, ModelRoute } from './types.js';

/** A client whose real client is made by `load` at its first request (again after a failed load). */
export function lazyClient(load: () => Promise<ModelClient>): ModelClient {
  let loaded: ModelClient | undefined;
  let loading: Promise<ModelClient> | undefined;
  const get = (): Promise<ModelClient> =>
    (loading ??= load().then(
      (client) => (loaded = client),
      (err: unknown) => {
        loading = undefined;
        throw err;
      },
    ));
  return {
    stream(request: ModelRequest): AsyncIterable<ModelChunk> {
      if (loaded) return loaded.stream(request);
      return (async function* () {
        yield* (await get()).stream(request);
      })();
    },
  };
}

let openai: ModelClient | undefined;
let anthropic: ModelClient | undefined;

/** The client that serves `route` (dispatch on `route.provider`). */
export function createModelClient(route: ModelRoute): ModelClient {
  switch (route.provider) {
    case 'openai':
      return (openai ??= lazyClient(async () => (await import('./openai.js')).createOpenAIClient()));
    case 'anthropic':
      return (anthropic ??= lazyClient(async () => (await import('./anthropic.js')).createAnthropicClient()));
    case 'scripted':
      return scriptedModel;
    default:
      throw new Error(`unknown model provider: ${String((route as { provider: unknown }).provider)}`);
  }
}
