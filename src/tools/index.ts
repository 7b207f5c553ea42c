/** The tools a session offers, by name: shell and the confined file tools. */
import type { Config } from '../config/config.js';
import { fileTools } from './files.js';
import { createShellTool } from './shell.js';
import type { Tool } from './types.js';

export function createTools(config: Config): Map<string, Tool> {
  const secretEnv = Object.values(config.models.routes).flatMap((r) => (r.api_key_env ? [r.api_key_env] : []));
  const tools: Tool[] = [
    createShellTool({
      timeoutMs: config.limits.shell_timeout_ms,
      outputCapBytes: config.limits.shell_output_cap_bytes,
      secretEnv,
    }),
    ...fileTools,
  ];
  return new Map(tools.map((t) => [t.spec.name, t]));
}
