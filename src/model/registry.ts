/**
 * Picks the ModelClient for a route. Clients are stateless (keys and URLs are read per
 * request from the route), so one instance per provider is shared.
 */
import { createAnthropicClient } from './anthropic.js';
import { createOpenAIClient } from './openai.js';
import { scriptedModel } from './scripted.js';
import type { ModelClient, ModelRoute } from './types.js';

let openai: ModelClient | undefined;
let anthropic: ModelClient | undefined;

/** The client that serves `route` (dispatch on `route.provider`). */
export function createModelClient(route: ModelRoute): ModelClient {
  switch (route.provider) {
    case 'openai':
      return (openai ??= createOpenAIClient());
    case 'anthropic':
      return (anthropic ??= createAnthropicClient());
    case 'scripted':
      return scriptedModel;
    default:
      throw new Error(`unknown model provider: ${String((route as { provider: unknown }).provider)}`);
  }
}
