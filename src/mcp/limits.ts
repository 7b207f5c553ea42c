/**
 * Bounds on what an MCP server may hand us (docs/tools.md, "Limits"): a tool whose
 * `inputSchema` nests deeper than MAX_SCHEMA_DEPTH levels is left out, and so is every
 * tool past `mcp.max_tools`; each left-out tool is reported so that the sessions can warn,
 * naming the server. The depth is measured iteratively (no recursion, no stack overflow
 * however deep the schema), and no listing is ever spread into a call's arguments.
 */
import type { Tool as RemoteTool } from '@modelcontextprotocol/sdk/types.js';

/** The `mcp` config block as the MCP client uses it. */
export interface McpLimits {
  /** Tools kept per server listing (the first ones, in the server's order). */
  max_tools: number;
  /** Longest stdio message (one line) in bytes; a longer one fails the server. */
  max_message_bytes: number;
}

export const DEFAULT_MCP_LIMITS: McpLimits = { max_tools: 512, max_message_bytes: 16 * 1024 * 1024 };

/** Levels of objects and arrays an input schema may nest. */
export const MAX_SCHEMA_DEPTH = 64;

/** A tool left out of a listing, and why (for a warning). */
export interface RefusedTool {
  /** The tool's name on the server, or `undefined` for the tools past `max_tools` (counted in `reason`). */
  name: string | undefined;
  reason: string;
}

/** Whether `value` nests objects/arrays deeper than `limit` levels (iterative walk). */
export function nestsDeeperThan(value: unknown, limit: number): boolean {
  const stack: Array<[unknown, number]> = [[value, 1]];
  while (stack.length > 0) {
    const [node, depth] = stack.pop()!;
    if (node === null || typeof node !== 'object') continue;
    if (depth > limit) return true;
    const children = Array.isArray(node) ? node : Object.values(node as Record<string, unknown>);
    for (const child of children) if (child !== null && typeof child === 'object') stack.push([child, depth + 1]);
  }
  return false;
}

/** The tools kept from a server's listing, and those left out. */
export function boundListing(remote: readonly RemoteTool[], limits: McpLimits): { tools: RemoteTool[]; refused: RefusedTool[] } {
  const tools: RemoteTool[] = [];
  const refused: RefusedTool[] = [];
  const kept = Math.min(remote.length, limits.max_tools);
  for (let i = 0; i < kept; i++) {
    const tool = remote[i]!;
    if (nestsDeeperThan(tool.inputSchema, MAX_SCHEMA_DEPTH)) {
      refused.push({ name: tool.name, reason: `its inputSchema nests deeper than ${MAX_SCHEMA_DEPTH} levels` });
    } else {
      tools.push(tool);
    }
  }
  if (remote.length > kept) {
    refused.push({ name: undefined, reason: `it offers more than mcp.max_tools (${limits.max_tools}) tools (${remote.length} read); the tools past the first ${limits.max_tools} are left out` });
  }
  return { tools, refused };
}
