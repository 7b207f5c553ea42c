/**
 * A session's tools: the host's built-in tools, the session's MCP tools (its `McpToolset`,
 * started when first needed) and `delegate` (subagents). `offer()` answers what the next
 * model call is offered — the specs, each tool's approval mode, and the MCP warnings this
 * session has not journaled yet; `tool(name)` finds the tool a call names when it runs;
 * `listing()` describes every tool and server for `session tools` (nothing is started).
 * Used by the session's child actors and the pump, never by a guard.
 */
import type { ApprovalPolicy } from '../../protocol/index.js';
import type { McpToolset, McpServerStatus } from '../mcp/index.js';
import type { ToolSpec } from '../model/types.js';
import type { Tool } from '../tools/types.js';

/**
 * When a tool's calls wait for an exec_approval: `session` — under the session's policy
 * `ask` (shell, write_file); `ask` — always (an MCP server with `approval: "ask"`);
 * `auto` — never.
 */
/**
 * A table keyed by tool names, which come from models and MCP servers: no prototype, so
 * `__proto__` or `constructor` are plain names (docs/tools.md). Read it with `Object.hasOwn`.
 */
export function nameTable<T>(): Record<string, T> {
  return Object.create(null) as Record<string, T>;
}

/** The entry for `name`, never one inherited from Object.prototype. */
export function ownEntry<T>(table: Readonly<Record<string, T>>, name: string): T | undefined {
  return Object.hasOwn(table, name) ? table[name] : undefined;
}

export type ToolApproval = ApprovalPolicy | 'session';

/** What one model call is offered. */
export interface ToolOffer {
  specs: ToolSpec[];
  /** Approval mode by tool name. */
  approvals: Record<string, ToolApproval>;
  /** New MCP warnings to journal (one per server failure), as `warning` messages. */
  warnings: string[];
}

/** One tool as `session tools` lists it. */
export interface ToolListingEntry {
  name: string;
  source: 'builtin' | 'mcp';
  server?: string;
  status: 'available';
  /** Absent for an MCP tool this session has not been offered yet (another session's listing). */
  approval?: ToolApproval;
}

export interface ToolListing {
  tools: ToolListingEntry[];
  /** Every configured MCP server as it is now (state, tools offered, last error). */
  mcp_servers: McpServerStatus[];
}

export function approvalOf(tool: Tool): ToolApproval {
  const mode = (tool as { approval?: unknown }).approval;
  if (mode === 'ask' || mode === 'auto' || mode === 'session') return mode;
  return tool.needsApproval ? 'session' : 'auto';
}

export class SessionToolbox {
  /** The MCP tools of the last offer, by exposed name. */
  private mcpTools = new Map<string, Tool>();
  /** What every offer holds of the built-ins (they never change). */
  private readonly builtinSpecs: readonly ToolSpec[];
  private readonly builtinApprovals: Readonly<Record<string, ToolApproval>>;

  constructor(
    /** Built-in tools (the host's toolset) and delegate, by name. */
    private readonly builtins: ReadonlyMap<string, Tool>,
    private readonly mcp: McpToolset | null,
  ) {
    const approvals = nameTable<ToolApproval>();
    for (const tool of builtins.values()) approvals[tool.spec.name] = approvalOf(tool);
    this.builtinSpecs = [...builtins.values()].map((t) => t.spec);
    this.builtinApprovals = approvals;
  }

  /**
   * Start what is needed and answer what the next model call is offered — at once when the
   * session has no MCP server (nothing to start), else once the servers are listed.
   */
  offer(): ToolOffer | Promise<ToolOffer> {
    const offer: ToolOffer = { specs: [...this.builtinSpecs], approvals: Object.assign(nameTable<ToolApproval>(), this.builtinApprovals), warnings: [] };
    const mcp = this.mcp;
    return mcp?.hasServers ? this.withMcp(mcp, offer) : offer;
  }

  /** The offer with the MCP servers' tools (built-in names win) and their new warnings. */
  private async withMcp(mcp: McpToolset, offer: ToolOffer): Promise<ToolOffer> {
    const listed = await mcp.list();
    this.mcpTools = new Map(listed.tools.map((t) => [t.spec.name, t]));
    for (const tool of listed.tools) {
      if (Object.hasOwn(offer.approvals, tool.spec.name)) continue; // a built-in name wins
      offer.specs.push(tool.spec);
      offer.approvals[tool.spec.name] = approvalOf(tool);
    }
    for (const w of listed.warnings) offer.warnings.push(w.message);
    return offer;
  }

  /**
   * The tool a call names: a built-in at once. An MCP tool offered before is found at once
   * too; after a restart (nothing offered yet in this process) the servers are listed first.
   */
  tool(name: string): Tool | undefined | Promise<Tool | undefined> {
    const builtin = this.builtins.get(name);
    if (builtin) return builtin;
    if (!this.mcp?.hasServers) return undefined;
    if (this.mcpTools.has(name)) return this.mcpTools.get(name);
    return Promise.resolve(this.offer()).then(() => this.mcpTools.get(name));
  }

  /** Every tool and server, as they are now. */
  listing(): ToolListing {
    const tools: ToolListingEntry[] = [...this.builtins.values()].map((t) => ({
      name: t.spec.name,
      source: 'builtin',
      status: 'available',
      approval: approvalOf(t),
    }));
    const servers = this.mcp?.status() ?? [];
    for (const server of servers) {
      for (const name of server.tools) {
        const tool = this.mcpTools.get(name);
        tools.push({
          name,
          source: 'mcp',
          server: server.server,
          status: 'available',
          ...(tool && { approval: approvalOf(tool) }),
        });
      }
    }
    return { tools, mcp_servers: servers };
  }

  /** The session leaves memory: its MCP servers may end (after their linger). */
  close(): void {
    this.mcp?.close();
  }
}
