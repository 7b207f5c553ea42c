/**
 * What one session sees of the MCP servers: `list()` starts the servers it needs (lazily,
 * in parallel), and answers the tools currently available as `Tool` objects (the
 * src/tools seam) plus the warnings this session has not been told yet — one per server
 * failure. `status()` describes every configured server for `session tools`.
 */
import type { Tool as RemoteTool } from '@modelcontextprotocol/sdk/types.js';
import type { ApprovalPolicy } from '../../protocol/index.js';
import type { Tool, ToolContext, ToolResult } from '../tools/types.js';
import type { McpApproval } from './config.js';
import { McpServerError, type McpFailureKind } from './errors.js';
import { exposedNames } from './naming.js';
import { convertResult } from './result.js';
import type { ServerSlot, SlotState } from './slot.js';

/** A tool of an MCP server, as the session runs it. */
export interface McpTool extends Tool {
  /** The configured server name. */
  server: string;
  /** The tool's name on the server. */
  remoteName: string;
  /**
   * `ask`: every call waits for an exec_approval, whatever the session policy; `auto`:
   * none waits; `session`: the session's policy decides (like shell). `needsApproval`
   * is `approval !== 'auto'`; use `mustAsk` to decide a call.
   */
  approval: McpApproval;
}

/** Whether a call of `tool` waits for approval under the session's approval policy. */
export function mustAsk(tool: Pick<McpTool, 'approval'>, sessionPolicy: ApprovalPolicy): boolean {
  return tool.approval === 'ask' || (tool.approval === 'session' && sessionPolicy === 'ask');
}

/** Something the session should journal as a `warning` event. */
export interface McpWarning {
  server: string;
  kind: McpFailureKind | 'name_collision' | 'tool_left_out';
  message: string;
}

export interface McpServerStatus {
  server: string;
  transport: 'stdio' | 'http';
  state: SlotState;
  /** Exposed names of the tools currently offered. */
  tools: string[];
  /** Names in the server's `tools` filter that it does not offer. */
  missing_tools: string[];
  /** Process group of a running stdio server. */
  pgid?: number;
  /** The last failure, while failed. */
  error?: string;
  /** When it may be started again (ms since epoch), while failed. */
  retry_at?: number;
  starts: number;
}

interface Listed {
  tools: McpTool[];
  dropped: string[];
  missing: string[];
}

/** The `params._meta` fields of a session's tool call (its trace context), if any. */
export type TraceContextOf = (sessionId: string, callId: string) => Record<string, string> | undefined;

const INTERRUPTED: ToolResult = { status: 'error', output: 'interrupted: the MCP call was cancelled' };

export class McpToolset {
  private readonly seenFailure = new Map<ServerSlot, number>();
  private readonly seenDropped = new Set<string>();
  private readonly cache = new Map<ServerSlot, { generation: number; listed: Listed }>();
  private readonly createdAt = Date.now();
  private closed = false;

  constructor(
    private readonly slots: readonly ServerSlot[],
    private readonly release: () => void,
    /** Bytes of a result's output kept (the rest is cut with a note). */
    private readonly outputCapBytes: number,
    private readonly traceContext?: TraceContextOf,
  ) {}

  /** Whether this session has any MCP server configured (none: `list()` always answers nothing). */
  get hasServers(): boolean {
    return this.slots.length > 0;
  }

  /** Start what is needed and answer the tools available now, with new warnings. */
  async list(): Promise<{ tools: McpTool[]; warnings: McpWarning[] }> {
    if (this.closed) return { tools: [], warnings: [] };
    await Promise.all(this.slots.map((slot) => slot.ensure()));
    const tools: McpTool[] = [];
    const warnings: McpWarning[] = [];
    for (const slot of this.slots) {
      const failure = slot.failure;
      if (failure && failure.seq > (this.seenFailure.get(slot) ?? 0) && (slot.state === 'failed' || failure.at >= this.createdAt)) {
        this.seenFailure.set(slot, failure.seq);
        warnings.push({ server: slot.config.name, kind: failure.error.kind, message: failure.error.message });
      }
      if (slot.state !== 'ready') continue;
      const listed = this.listed(slot);
      for (const tool of listed.tools) tools.push(tool);
      this.refusedWarnings(slot, warnings);
      for (const remote of listed.dropped) {
        const key = `${slot.config.name}\0${remote}`;
        if (this.seenDropped.has(key)) continue;
        this.seenDropped.add(key);
        warnings.push({ server: slot.config.name, kind: 'name_collision', message: `MCP server "${slot.config.name}": tool "${remote}" left out: its name collides with another tool after sanitizing` });
      }
    }
    return { tools, warnings };
  }

  /** Every configured server of this session, as it is now (nothing is started). */
  status(): McpServerStatus[] {
    return this.slots.map((slot) => {
      const listed = slot.state === 'ready' ? this.listed(slot) : undefined;
      const failure = slot.state === 'failed' ? slot.failure : undefined;
      const pgid = slot.current?.pgid;
      return {
        server: slot.config.name,
        transport: slot.config.transport,
        state: slot.state,
        tools: listed?.tools.map((t) => t.spec.name) ?? [],
        missing_tools: listed?.missing ?? [],
        ...(pgid !== undefined && { pgid }),
        ...(failure && { error: failure.error.message, retry_at: failure.retryAt }),
        starts: slot.starts,
      };
    });
  }

  /** This session no longer needs its servers (they may linger for other sessions). */
  close(): void {
    if (this.closed) return;
    this.closed = true;
    this.release();
  }

  /** One warning per tool the server's listing lost to the limits (docs/tools.md), per session. */
  private refusedWarnings(slot: ServerSlot, warnings: McpWarning[]): void {
    const server = slot.config.name;
    for (const refused of slot.current?.refusedTools ?? []) {
      const key = `${server}\0${refused.name ?? ''}\0${refused.reason}`;
      if (this.seenDropped.has(key)) continue;
      this.seenDropped.add(key);
      const what = refused.name === undefined ? 'tools left out' : `tool ${JSON.stringify(refused.name.slice(0, 100))} left out`;
      warnings.push({ server, kind: 'tool_left_out', message: `MCP server "${server}": ${what}: ${refused.reason}` });
    }
  }

  private listed(slot: ServerSlot): Listed {
    const cached = this.cache.get(slot);
    if (cached && cached.generation === slot.generation) return cached.listed;
    const listed = buildTools(slot, slot.current?.tools ?? [], this.outputCapBytes, this.traceContext);
    this.cache.set(slot, { generation: slot.generation, listed });
    return listed;
  }
}

function buildTools(slot: ServerSlot, remote: readonly RemoteTool[], capBytes: number, traceContext: TraceContextOf | undefined): Listed {
  const { config } = slot;
  const filter = config.tools ? new Set(config.tools) : undefined;
  const offered = remote.filter((t) => (!filter || filter.has(t.name)) && t.execution?.taskSupport !== 'required');
  const missing = config.tools ? config.tools.filter((name) => !remote.some((t) => t.name === name)) : [];
  const byName = new Map(offered.map((t) => [t.name, t]));
  const { named, dropped } = exposedNames(config.name, offered.map((t) => t.name));
  const tools = named.map(({ remote: remoteName, exposed }): McpTool => {
    const def = byName.get(remoteName)!;
    return {
      server: config.name,
      remoteName,
      approval: config.approval,
      needsApproval: config.approval !== 'auto',
      spec: {
        name: exposed,
        description: def.description ?? def.title ?? `${remoteName} (MCP server "${config.name}")`,
        parameters: def.inputSchema as Record<string, unknown>,
      },
      run: (args, ctx) => runTool(slot, remoteName, args, ctx, capBytes, traceContext),
    };
  });
  return { tools, dropped, missing };
}

async function runTool(
  slot: ServerSlot,
  remote: string,
  args: Record<string, unknown>,
  ctx: ToolContext,
  capBytes: number,
  traceContext: TraceContextOf | undefined,
): Promise<ToolResult> {
  if (ctx.signal.aborted) return INTERRUPTED;
  const conn = slot.current;
  if (!conn) {
    const why = slot.failure ? `: ${slot.failure.error.message}` : '';
    return { status: 'error', output: new McpServerError('not_running', slot.config.name, `not running${why}`).message };
  }
  try {
    const meta = traceContext && ctx.sessionId !== undefined && ctx.callId !== undefined ? traceContext(ctx.sessionId, ctx.callId) : undefined;
    return convertResult(await conn.call(remote, args, ctx.signal, meta), capBytes);
  } catch (err) {
    if (err instanceof McpServerError && err.kind === 'cancelled') return INTERRUPTED;
    return { status: 'error', output: err instanceof Error ? err.message : String(err) };
  }
}
