/**
 * A session's ACP config options: `model` (the routes of `list_models`), `thought_level`
 * (the route's reasoning efforts, when it has any) and `mode` (approval policy ask / auto),
 * and applying a chosen value (`set_model`, or `session approval_policy`).
 */
import * as acp from '@agentclientprotocol/sdk';
import type { SessionDescriptor } from '../../protocol/index.js';
import type { AgentdClient } from '../client/client.js';

/** What the options show: the session's route, reasoning effort and approval policy. */
export interface ConfigSettings {
  model: { route: string; reasoning_effort: string | null };
  approval_policy: SessionDescriptor['approval_policy'];
}

export function settingsOf(s: SessionDescriptor): ConfigSettings {
  return { model: { route: s.model.route, reasoning_effort: s.model.reasoning_effort }, approval_policy: s.approval_policy };
}

export async function configOptions(client: AgentdClient, s: ConfigSettings): Promise<acp.SessionConfigOption[]> {
  const models = await client.listModels();
  const route = models.routes.find((r) => r.route === s.model.route);
  const out: acp.SessionConfigOption[] = [
    {
      id: 'model',
      name: 'Model',
      category: 'model',
      type: 'select',
      currentValue: s.model.route,
      options: models.routes.map((r) => ({ value: r.route, name: r.route, description: `${r.provider} ${r.model}` })),
    },
  ];
  const efforts = route?.reasoning_efforts ?? [];
  if (efforts.length > 0) {
    out.push({
      id: 'thought_level',
      name: 'Thinking',
      category: 'thought_level',
      type: 'select',
      currentValue: s.model.reasoning_effort ?? 'default',
      options: [{ value: 'default', name: 'default' }, ...efforts.map((e) => ({ value: e, name: e }))],
    });
  }
  out.push({
    id: 'mode',
    name: 'Approvals',
    category: 'mode',
    type: 'select',
    currentValue: s.approval_policy,
    options: [
      { value: 'ask', name: 'Ask', description: 'tool calls wait for your approval' },
      { value: 'auto', name: 'Auto', description: 'tool calls run without asking' },
    ],
  });
  return out;
}

/** Submit the change as submission `id` (its first event tells how it went). */
export async function applyConfigOption(client: AgentdClient, sessionId: string, id: string, configId: string, value: string, route: string): Promise<void> {
  if (configId === 'model') {
    await client.submit(sessionId, { id, op: { type: 'set_model', route: value } });
  } else if (configId === 'thought_level') {
    await client.submit(sessionId, { id, op: { type: 'set_model', route, ...(value !== 'default' && { reasoning_effort: value }) } });
  } else if (configId === 'mode') {
    if (value !== 'ask' && value !== 'auto') throw acp.RequestError.invalidParams(undefined, 'mode is "ask" or "auto"');
    await client.submit(sessionId, { id, op: { type: 'capability_command', capability: 'session', command: 'approval_policy', arguments: { policy: value } } });
  } else {
    throw acp.RequestError.invalidParams(undefined, `unknown config option "${configId}"`);
  }
}
