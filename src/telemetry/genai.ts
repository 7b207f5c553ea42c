/**
 * The OpenTelemetry GenAI semantic conventions agentd follows (span names and `gen_ai.*`
 * attributes, docs/operations.md "Traces"). They are still "development" conventions, so
 * their names are spelled here rather than imported from the incubating entry point.
 */
import type { ModelRoute } from '../model/types.js';

export const GEN_AI = {
  operationName: 'gen_ai.operation.name',
  providerName: 'gen_ai.provider.name',
  agentName: 'gen_ai.agent.name',
  conversationId: 'gen_ai.conversation.id',
  requestModel: 'gen_ai.request.model',
  responseModel: 'gen_ai.response.model',
  finishReasons: 'gen_ai.response.finish_reasons',
  inputTokens: 'gen_ai.usage.input_tokens',
  outputTokens: 'gen_ai.usage.output_tokens',
  cacheReadTokens: 'gen_ai.usage.cache_read.input_tokens',
  toolName: 'gen_ai.tool.name',
  toolCallId: 'gen_ai.tool.call.id',
  toolCallArguments: 'gen_ai.tool.call.arguments',
  toolCallResult: 'gen_ai.tool.call.result',
  inputMessages: 'gen_ai.input.messages',
  outputMessages: 'gen_ai.output.messages',
  systemInstructions: 'gen_ai.system_instructions',
} as const;

/** The agent span's name and `gen_ai.agent.name`. */
export const AGENT_NAME = 'agentd';
export const INVOKE_AGENT_SPAN = `invoke_agent ${AGENT_NAME}`;

/** `gen_ai.provider.name` of a route's provider (the conventions' well-known values; the offline model is agentd's own). */
export function providerName(provider: ModelRoute['provider']): string {
  return provider === 'scripted' ? 'agentd.scripted' : provider;
}

/** `server.address` and `server.port` of a route with a base URL. */
export function serverOf(route: ModelRoute): { address: string; port: number } | null {
  if (!route.base_url) return null;
  try {
    const url = new URL(route.base_url);
    const port = url.port ? Number(url.port) : url.protocol === 'https:' ? 443 : 80;
    return { address: url.hostname, port };
  } catch {
    return null;
  }
}

/** A value for a content attribute: strings as they are, anything else as JSON. */
export function contentValue(value: unknown): string {
  if (typeof value === 'string') return value;
  try {
    return JSON.stringify(value) ?? '';
  } catch {
    return String(value);
  }
}
