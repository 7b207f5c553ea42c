/**
 * A session host's toolset: the tools a session offers, by name (shell, the confined
 * file tools, edit_file, glob and grep), and close(), which ends every process a tool is still running. The host
 * owns it and closes it at shutdown.
 */
import type { Config } from '../config/config.js';
import type { ContainmentKind } from './contain.js';
import { shellEnvPolicy } from './env.js';
import { createFileTools } from './files.js';
import { createShellTool } from './shell.js';
import { createEditTool } from './edit.js';
import { dataDirGuard } from './protect.js';
import { createSearchTools } from './search.js';
import type { Tool } from './types.js';

export interface Toolset {
  tools: Map<string, Tool>;
  /** How shell calls' processes are contained here (see contain.ts). */
  containment: ContainmentKind;
  /** End every running tool process and wait until all are gone. */
  close(): Promise<void>;
}

export interface ToolsetOptions {
  /** The daemon's data dir: its token, journal and daemon.json are refused to the file tools. */
  dataDir: string;
}

export function createTools(config: Config, options: ToolsetOptions): Toolset {
  const shell = createShellTool({
    timeoutMs: config.limits.shell_timeout_ms,
    outputCapBytes: config.limits.shell_output_cap_bytes,
    env: shellEnvPolicy(config),
  });
  const guard = dataDirGuard(options.dataDir);
  const tools: Tool[] = [shell.tool, ...createFileTools({ dataDir: options.dataDir }), createEditTool(guard), ...createSearchTools(guard)];
  return { tools: new Map(tools.map((t) => [t.spec.name, t])), containment: shell.containment.kind, close: () => shell.close() };
}
