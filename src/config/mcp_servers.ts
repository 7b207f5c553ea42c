/**
 * The `mcp_servers` configuration block (docs/tools.md): a zod schema with clear
 * validation errors, resolved into one McpServerConfig per server (stdio or Streamable
 * HTTP). src/config/config.ts includes it as `mcp_servers: McpServersSchema`; it lives in
 * the config layer (config imports nothing above it) and src/mcp/ builds on it.
 */
import { z } from 'zod';
import {
  checkMcpServerNames,
  DEFAULT_MCP_STARTUP_TIMEOUT_MS,
  DEFAULT_MCP_TOOL_TIMEOUT_MS,
  LIMITS,
  McpServerEntrySchema,
  sanitizeMcpName,
  type ApprovalPolicy,
  type McpServerEntry,
} from '../../protocol/index.js';

/** Server names are short enough to leave at least 30 characters for the tool part. */
export const MAX_SERVER_NAME = LIMITS.mcpServerNameMaxChars;

/** Characters outside [A-Za-z0-9_-] replaced by `_` (server and tool names alike). */
export const sanitizeName = sanitizeMcpName;

export const DEFAULT_STARTUP_TIMEOUT_MS = DEFAULT_MCP_STARTUP_TIMEOUT_MS;
export const DEFAULT_TOOL_TIMEOUT_MS = DEFAULT_MCP_TOOL_TIMEOUT_MS;

/** Per-server approval: `ask` (every call waits), `auto` (none waits), or the session's policy. */
export type McpApproval = ApprovalPolicy | 'session';

interface CommonConfig {
  /** The configured name (the `NAME` of `NAME__TOOL` after sanitizing). */
  name: string;
  approval: McpApproval;
  /** Remote tool names to expose; undefined exposes every tool. */
  tools?: readonly string[];
  startup_timeout_ms: number;
  tool_timeout_ms: number;
}

export type McpServerConfig =
  | (CommonConfig & { transport: 'stdio'; command: string; args: readonly string[]; env: Readonly<Record<string, string>> })
  | (CommonConfig & { transport: 'http'; url: string; headers: Readonly<Record<string, string>> });

/** `mcp_servers` in the config file: `{NAME: entry}`, resolved to McpServerConfig by name. */
export const McpServersSchema = z
  .record(z.string(), McpServerEntrySchema)
  .superRefine((servers, ctx) => checkMcpServerNames(Object.keys(servers), ctx))
  .transform(resolveMcpServers)
  .default({});

/** Entries (already validated: config file or a session's checkpoint) resolved by name. */
export function resolveMcpServers(servers: Readonly<Record<string, McpServerEntry>>): Record<string, McpServerConfig> {
  return Object.fromEntries(Object.entries(servers).map(([name, s]) => [name, resolveEntry(name, s)]));
}

function resolveEntry(name: string, s: McpServerEntry): McpServerConfig {
  const common: CommonConfig = {
    name,
    approval: s.approval ?? 'session',
    ...(s.tools !== undefined && { tools: s.tools }),
    startup_timeout_ms: s.startup_timeout_ms,
    tool_timeout_ms: s.tool_timeout_ms,
  };
  if (s.command !== undefined) return { ...common, transport: 'stdio', command: s.command, args: s.args ?? [], env: s.env ?? {} };
  return { ...common, transport: 'http', url: s.url!, headers: s.headers ?? {} };
}

export class McpConfigError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'McpConfigError';
  }
}

/** Parse a raw `mcp_servers` value; throws McpConfigError naming the first bad field. */
export function parseMcpServers(raw: unknown, source = 'mcp_servers'): Record<string, McpServerConfig> {
  const result = McpServersSchema.safeParse(raw);
  if (result.success) return result.data;
  const issue = result.error.issues[0]!;
  const path = [source, ...issue.path.map(String)].join('.');
  throw new McpConfigError(`${path}: ${issue.message}`);
}
