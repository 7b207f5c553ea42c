/**
 * The `mcp_servers` configuration block (docs/tools.md): a zod schema with clear
 * validation errors, resolved into one McpServerConfig per server (stdio or Streamable
 * HTTP). src/config/config.ts includes it as `mcp_servers: McpServersSchema`; it lives in
 * the config layer (config imports nothing above it) and src/mcp/ builds on it.
 */
import { z } from 'zod';
import { ApprovalPolicySchema, type ApprovalPolicy } from '../../protocol/index.js';

/** Server names are short enough to leave at least 30 characters for the tool part. */
export const MAX_SERVER_NAME = 32;

/** Characters outside [A-Za-z0-9_-] replaced by `_` (server and tool names alike). */
export function sanitizeName(name: string): string {
  return name.replace(/[^A-Za-z0-9_-]/g, '_');
}

export const DEFAULT_STARTUP_TIMEOUT_MS = 10_000;
export const DEFAULT_TOOL_TIMEOUT_MS = 120_000;

/** Per-server approval: `ask` (every call waits), `auto` (none waits), or the session's policy. */
export type McpApproval = ApprovalPolicy | 'session';

const StringMap = z.record(z.string(), z.string());

const ServerEntrySchema = z
  .strictObject({
    command: z.string().min(1, 'must be a non-empty string').optional(),
    args: z.array(z.string()).optional(),
    env: StringMap.optional(),
    url: z
      .url({ protocol: /^https?$/, error: 'must be an http:// or https:// URL' })
      .optional(),
    headers: StringMap.optional(),
    approval: ApprovalPolicySchema.optional(),
    tools: z.array(z.string().min(1, 'tool names are non-empty')).optional(),
    startup_timeout_ms: z.int().positive().default(DEFAULT_STARTUP_TIMEOUT_MS),
    tool_timeout_ms: z.int().positive().default(DEFAULT_TOOL_TIMEOUT_MS),
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
  .record(z.string(), ServerEntrySchema)
  .superRefine((servers, ctx) => {
    const seen = new Map<string, string>();
    for (const name of Object.keys(servers)) {
      if (name.length === 0 || name.length > MAX_SERVER_NAME) {
        ctx.addIssue({ code: 'custom', path: [name], message: `server names are 1–${MAX_SERVER_NAME} characters` });
      }
      const clean = sanitizeName(name);
      if (clean.includes('__')) {
        ctx.addIssue({ code: 'custom', path: [name], message: `server name "${name}" must not contain "__" (after replacing characters outside [A-Za-z0-9_-] by "_"): it separates server and tool` });
      }
      const other = seen.get(clean);
      if (other !== undefined) {
        ctx.addIssue({ code: 'custom', path: [name], message: `server names "${other}" and "${name}" both become "${clean}" in tool names` });
      }
      seen.set(clean, name);
    }
  })
  .transform((servers): Record<string, McpServerConfig> =>
    Object.fromEntries(Object.entries(servers).map(([name, s]) => [name, resolveEntry(name, s)])),
  )
  .default({});

type ServerEntry = z.infer<typeof ServerEntrySchema>;

function resolveEntry(name: string, s: ServerEntry): McpServerConfig {
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
