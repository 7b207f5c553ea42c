/**
 * The `mcp_servers` entry (docs/tools.md "MCP servers"): one stdio (`command`) or Streamable
 * HTTP (`url`) server, as the config file and `create_session.config.mcp_servers` (a
 * session's own servers, kept in its checkpoint) both write it. The config layer
 * (src/config/mcp_servers.ts) resolves these entries for the MCP client.
 */
import { z } from 'zod';
import { ApprovalPolicySchema } from './common.js';
import { LIMITS } from './limits.js';

export const DEFAULT_MCP_STARTUP_TIMEOUT_MS = 10_000;
export const DEFAULT_MCP_TOOL_TIMEOUT_MS = 120_000;

/** Characters outside [A-Za-z0-9_-] replaced by `_` (server and tool names alike). */
export function sanitizeMcpName(name: string): string {
  return name.replace(/[^A-Za-z0-9_-]/g, '_');
}

const StringMap = z.record(z.string(), z.string());
/** A duration in ms, validated like every configured duration (1 ms to 2^31−1 ms). */
const TimeoutMs = z.int().min(1).max(2_147_483_647);

/** One server: exactly one of `command` (stdio) or `url` (Streamable HTTP). */
export const McpServerEntrySchema = z
  .strictObject({
    command: z.string().min(1, 'must be a non-empty string').optional(),
    args: z.array(z.string()).optional(),
    env: StringMap.optional(),
    url: z.url({ protocol: /^https?$/, error: 'must be an http:// or https:// URL' }).optional(),
    headers: StringMap.optional(),
    approval: ApprovalPolicySchema.optional(),
    tools: z.array(z.string().min(1, 'tool names are non-empty')).optional(),
    startup_timeout_ms: TimeoutMs.default(DEFAULT_MCP_STARTUP_TIMEOUT_MS),
    tool_timeout_ms: TimeoutMs.default(DEFAULT_MCP_TOOL_TIMEOUT_MS),
  })
  .superRefine((s, ctx) => {
    if ((s.command === undefined) === (s.url === undefined)) {
      ctx.addIssue({ code: 'custom', message: 'exactly one of "command" (stdio) or "url" (Streamable HTTP) is required' });
    }
    if (s.url !== undefined) {
      for (const field of ['args', 'env'] as const) {
        if (s[field] !== undefined) ctx.addIssue({ code: 'custom', path: [field], message: `"${field}" applies to a stdio server ("command"), not to "url"` });
      }
    }
    if (s.command !== undefined && s.headers !== undefined) {
      ctx.addIssue({ code: 'custom', path: ['headers'], message: '"headers" applies to an HTTP server ("url"), not to "command"' });
    }
  });
export type McpServerEntry = z.infer<typeof McpServerEntrySchema>;

/** Server names: 1–32 characters, no `__` after sanitizing, no two alike after sanitizing. */
export function checkMcpServerNames(names: readonly string[], ctx: z.RefinementCtx): void {
  const seen = new Map<string, string>();
  for (const name of names) {
    if (name.length === 0 || name.length > LIMITS.mcpServerNameMaxChars) {
      ctx.addIssue({ code: 'custom', path: [name], message: `server names are 1–${LIMITS.mcpServerNameMaxChars} characters` });
    }
    const clean = sanitizeMcpName(name);
    if (clean.includes('__')) {
      ctx.addIssue({ code: 'custom', path: [name], message: `server name "${name}" must not contain "__" (after replacing characters outside [A-Za-z0-9_-] by "_"): it separates server and tool` });
    }
    const other = seen.get(clean);
    if (other !== undefined) {
      ctx.addIssue({ code: 'custom', path: [name], message: `server names "${other}" and "${name}" both become "${clean}" in tool names` });
    }
    seen.set(clean, name);
  }
}

/** `create_session.config.mcp_servers`: `{NAME: entry}`, at most 32 servers. */
export const SessionMcpServersSchema = z
  .record(z.string(), McpServerEntrySchema)
  .superRefine((servers, ctx) => {
    const names = Object.keys(servers);
    if (names.length > LIMITS.sessionMcpServersMax) {
      ctx.addIssue({ code: 'custom', message: `at most ${LIMITS.sessionMcpServersMax} MCP servers per session` });
    }
    checkMcpServerNames(names, ctx);
  });
export type SessionMcpServers = z.infer<typeof SessionMcpServersSchema>;
