/**
 * The daemon's MCP servers. What is shared: one server process per (server name, cwd)
 * for stdio servers — a stdio server runs in the session's cwd, so sessions in the same
 * cwd share it and sessions elsewhere get their own — and one connection per server name
 * for HTTP servers (they have no cwd). A server nobody uses any more is ended after
 * `lingerMs`; `close()` ends them all, process groups included. A session's own servers
 * (`create_session.config.mcp_servers`) are that session's alone: never shared, and one of
 * them takes the place of a configured server of the same name for that session.
 */
import { resolve } from 'node:path';
import type { McpServerConfig } from './config.js';
import { sanitizeName } from './naming.js';
import { DEFAULT_BACKOFF, ServerSlot, type BackoffOptions, type SlotState } from './slot.js';
import { killAllServerGroups } from './groups.js';
import { DEFAULT_MCP_LIMITS, type McpLimits } from './limits.js';
import { McpToolset, type TraceContextOf } from './toolset.js';

export interface McpManagerOptions {
  /** Environment for stdio servers (the shell's minimal environment); each server's `env` is added. */
  baseEnv: Readonly<Record<string, string>>;
  backoff?: Partial<BackoffOptions>;
  /** How long a server no session uses keeps running (default 60 000 ms). */
  lingerMs?: number;
  /** Bytes of a call's output kept, like `limits.shell_output_cap_bytes` (default 1 MiB). */
  outputCapBytes?: number;
  /** The `params._meta` fields of a tool call's request (its trace context, docs/operations.md). */
  traceContext?: TraceContextOf;
  /** `mcp.max_tools` and `mcp.max_message_bytes` (defaults: 512 tools, 16 MiB). */
  limits?: Partial<McpLimits>;
}

const DEFAULT_LINGER_MS = 60_000;
const DEFAULT_OUTPUT_CAP_BYTES = 1024 * 1024;

/** A session's own servers, by name, and the session they belong to. */
export interface OwnMcpServers {
  owner: string;
  servers: Readonly<Record<string, McpServerConfig>>;
}

interface Entry {
  key: string;
  slot: ServerSlot;
  refs: number;
  linger?: NodeJS.Timeout;
}

export class McpManager {
  private readonly entries = new Map<string, Entry>();
  private readonly backoff: BackoffOptions;
  private readonly lingerMs: number;
  private readonly outputCapBytes: number;
  private readonly limits: McpLimits;
  private closed = false;

  constructor(
    private readonly servers: Readonly<Record<string, McpServerConfig>>,
    private readonly options: McpManagerOptions,
  ) {
    this.backoff = { ...DEFAULT_BACKOFF, ...options.backoff };
    this.lingerMs = options.lingerMs ?? DEFAULT_LINGER_MS;
    this.outputCapBytes = options.outputCapBytes ?? DEFAULT_OUTPUT_CAP_BYTES;
    this.limits = { ...DEFAULT_MCP_LIMITS, ...options.limits };
  }

  /** Whether any MCP server is configured (none: every toolset would be empty). */
  get hasServers(): boolean {
    return Object.keys(this.servers).length > 0;
  }

  /** The MCP tools of a session working in `cwd`; close() it when the session goes. */
  toolset(cwd: string, own?: OwnMcpServers): McpToolset {
    if (this.closed) return new McpToolset([], () => {}, this.outputCapBytes);
    const dir = resolve(cwd); // one process for "/p" and "/p/"
    const mine = own ? Object.values(own.servers) : [];
    const taken = new Set(mine.map((c) => sanitizeName(c.name)));
    const entries = [
      ...Object.values(this.servers)
        .filter((config) => !taken.has(sanitizeName(config.name)))
        .map((config) => this.acquire(config, dir, this.key(config, dir))),
      ...mine.map((config) => this.acquire(config, dir, `own\0${own!.owner}\0${config.name}`)),
    ];
    let released = false;
    return new McpToolset(
      entries.map((e) => e.slot),
      () => {
        if (released) return;
        released = true;
        for (const e of entries) this.releaseEntry(e);
      },
      this.outputCapBytes,
      this.options.traceContext,
    );
  }

  /** The servers' connections (one per server and cwd, or per server over HTTP) by state (telemetry). */
  states(): Record<SlotState, number> {
    const counts: Record<SlotState, number> = { idle: 0, starting: 0, ready: 0, failed: 0, closed: 0 };
    for (const e of this.entries.values()) counts[e.slot.state]++;
    return counts;
  }

  /** End every server (TERM, KILL after 2 s) and refuse new toolsets. */
  async close(): Promise<void> {
    this.closed = true;
    const entries = [...this.entries.values()];
    this.entries.clear();
    for (const e of entries) clearTimeout(e.linger);
    await Promise.all(entries.map((e) => e.slot.close()));
    killAllServerGroups();
  }

  private key(config: McpServerConfig, cwd: string): string {
    return config.transport === 'stdio' ? `${config.name}\0${cwd}` : config.name;
  }

  private acquire(config: McpServerConfig, cwd: string, key: string): Entry {
    let entry = this.entries.get(key);
    if (!entry) {
      entry = { key, slot: new ServerSlot(config, { cwd, env: this.options.baseEnv, limits: this.limits }, this.backoff), refs: 0 };
      this.entries.set(key, entry);
    }
    clearTimeout(entry.linger);
    entry.linger = undefined;
    entry.refs += 1;
    return entry;
  }

  private releaseEntry(entry: Entry): void {
    entry.refs -= 1;
    if (entry.refs > 0 || this.closed) return;
    entry.linger = setTimeout(() => {
      if (this.entries.get(entry.key) !== entry || entry.refs > 0) return;
      this.entries.delete(entry.key);
      void entry.slot.close();
    }, this.lingerMs);
    entry.linger.unref();
  }
}
