/**
 * Tool naming: an MCP tool is offered to the model as `SERVER__TOOL`, characters outside
 * [A-Za-z0-9_-] replaced by `_`, at most 64 characters. A name that is too long, or that
 * collides with another tool of the same server after sanitizing, ends in `_` + 8 hex
 * digits of a hash of the server's and the tool's original names (deterministic, so the
 * name is the same after every re-list and restart).
 */
import { createHash } from 'node:crypto';
import { sanitizeName } from '../config/mcp_servers.js';

export { sanitizeName, MAX_SERVER_NAME } from '../config/mcp_servers.js';

export const MAX_TOOL_NAME = 64;
const HASH_HEX = 8;

function hashed(server: string, tool: string, clean: string, prefix: string): string {
  const digest = createHash('sha256').update(`${server}\0${tool}`).digest('hex').slice(0, HASH_HEX);
  const room = MAX_TOOL_NAME - prefix.length - HASH_HEX - 1;
  return `${prefix}${clean.slice(0, room)}_${digest}`;
}

export interface NamedTool {
  remote: string;
  exposed: string;
}

/**
 * Exposed names for one server's tools, in the given order. A tool whose plain name is
 * valid and fits keeps `SERVER__TOOL` even when a sanitized peer would collide with it;
 * the peers get the hashed form. `dropped` lists tools that still collide (only possible
 * with a hash collision) — they are left out.
 */
export function exposedNames(server: string, remotes: readonly string[]): { named: NamedTool[]; dropped: string[] } {
  const prefix = `${sanitizeName(server)}__`;
  const plain = (tool: string) => `${prefix}${sanitizeName(tool)}`;
  const candidates = new Map<string, string[]>();
  for (const tool of remotes) {
    const name = plain(tool);
    candidates.set(name, [...(candidates.get(name) ?? []), tool]);
  }
  const named: NamedTool[] = [];
  const dropped: string[] = [];
  const taken = new Set<string>();
  const exposedFor = (tool: string): string => {
    const name = plain(tool);
    if (name.length > MAX_TOOL_NAME) return hashed(server, tool, sanitizeName(tool), prefix);
    const peers = candidates.get(name)!;
    if (peers.length === 1 || sanitizeName(tool) === tool) return name;
    return hashed(server, tool, sanitizeName(tool), prefix);
  };
  // Unaltered names first, so a hashed name never takes the name of a plain one.
  const ordered = [...remotes].sort((a, b) => Number(sanitizeName(b) === b) - Number(sanitizeName(a) === a));
  const byRemote = new Map<string, string>();
  for (const tool of ordered) {
    const name = exposedFor(tool);
    if (taken.has(name)) {
      dropped.push(tool);
      continue;
    }
    taken.add(name);
    byRemote.set(tool, name);
  }
  for (const tool of remotes) {
    const exposed = byRemote.get(tool);
    if (exposed !== undefined) named.push({ remote: tool, exposed });
  }
  return { named, dropped };
}
