/**
 * One live connection to one MCP server through the SDK `Client`: connect (spawn or
 * HTTP) and list its tools within the startup timeout, re-list on
 * `notifications/tools/list_changed` (coalesced: at most one re-list running and one
 * pending, however many notifications arrive), call a tool with a timeout and an abort
 * signal (the SDK sends `notifications/cancelled` on either), close. Only a request
 * still in flight is ever cancelled: `initialize` and `tools/list` get no abort signal
 * (a signal the SDK keeps listening to after the answer would cancel them later). An
 * unexpected end of the connection is reported once through `onLost` with a readable reason.
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport, StreamableHTTPError } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import { ToolListChangedNotificationSchema, type CallToolResult, type Tool as RemoteTool } from '@modelcontextprotocol/sdk/types.js';
import type { McpServerConfig } from './config.js';
import { McpServerError } from './errors.js';
import { boundListing, type McpLimits, type RefusedTool } from './limits.js';
import { StdioProcessTransport } from './stdio.js';

const CLIENT_INFO = { name: 'agentd', version: '0.1.0' };
/** Pages of tools/list followed before giving up (a server that never stops paging). */
const MAX_LIST_PAGES = 100;
/** How long a ping may take when an HTTP stream broke before the connection counts as lost; also the most close() waits for an HTTP session's DELETE. */
const PROBE_TIMEOUT_MS = 2000;
/** The longest timer Node.js honours. */
const MAX_TIMER_MS = 2_147_483_647;

export interface ConnectionHooks {
  /** The tool listing changed (after a list_changed notification was honoured). */
  onToolsChanged(): void;
  /** The connection ended without close() (crash, exit, HTTP failure). Called once. */
  onLost(error: McpServerError): void;
}

export interface LaunchContext {
  cwd: string;
  env: Readonly<Record<string, string>>;
  /** `mcp.max_tools` and `mcp.max_message_bytes` (docs/configuration.md). */
  limits: McpLimits;
}

export class McpConnection {
  private listing: RemoteTool[] = [];
  private refused: RefusedTool[] = [];
  /** The re-list running now, and the one waiting for it (at most one each). */
  private running: Promise<void> | undefined;
  private queued: Promise<void> | undefined;
  private closing = false;
  private lost = false;
  private probing = false;
  private lostError: McpServerError | undefined;
  private readonly inflight = new Set<AbortController>();

  private constructor(
    private readonly config: McpServerConfig,
    private readonly client: Client,
    private readonly transport: Transport,
    private readonly hooks: ConnectionHooks,
    private readonly limits: McpLimits,
  ) {}

  /** Start the server and list its tools, all within `startup_timeout_ms`. */
  static async open(config: McpServerConfig, launch: LaunchContext, hooks: ConnectionHooks, cancel?: AbortSignal): Promise<McpConnection> {
    const transport: Transport =
      config.transport === 'stdio'
        ? new StdioProcessTransport({
            command: config.command,
            args: config.args,
            cwd: launch.cwd,
            env: { ...launch.env, ...config.env },
            maxMessageBytes: launch.limits.max_message_bytes,
          })
        : new StreamableHTTPClientTransport(new URL(config.url), { requestInit: { headers: { ...config.headers } } });
    const client = new Client(CLIENT_INFO, { capabilities: {} });
    const conn = new McpConnection(config, client, transport, hooks, launch.limits);
    const timeout = config.startup_timeout_ms;
    let timer: NodeJS.Timeout | undefined;
    let onCancel: (() => void) | undefined;
    const expired = new Promise<never>((_, reject) => {
      timer = setTimeout(() => {
        reject(new McpServerError('startup_timeout', config.name, `did not start within ${timeout} ms${conn.diagnosticsSuffix()}`));
      }, timeout);
    });
    const exited = new Promise<never>((_, reject) => {
      onCancel = () => reject(new McpServerError('start_failed', config.name, 'closed during start-up'));
      cancel?.addEventListener('abort', onCancel, { once: true });
      client.onclose = () => {
        // A stdio server that exits says more (exit code, stderr) than the pending request's error.
        if (config.transport === 'stdio' && !conn.closing && !conn.lost) {
          reject(new McpServerError('start_failed', config.name, `exited during start-up${conn.exitSuffix()}`));
        }
        conn.handleClose();
      };
    });
    try {
      await Promise.race([conn.handshake(timeout), expired, exited]);
      return conn;
    } catch (err) {
      conn.closing = true;
      await conn.closeTransport();
      if (err instanceof McpServerError) throw err;
      throw new McpServerError('start_failed', config.name, `failed to start: ${describe(err)}${conn.diagnosticsSuffix()}`);
    } finally {
      clearTimeout(timer);
      if (onCancel) cancel?.removeEventListener('abort', onCancel);
      expired.catch(() => {});
      exited.catch(() => {});
    }
  }

  /**
   * initialize and the first tools/list, without an abort signal and with an SDK timeout
   * past the start-up timer's: a start that is given up closes the connection instead
   * (initialize must never be cancelled).
   */
  private async handshake(timeout: number): Promise<void> {
    const sdkTimeout = Math.min(timeout + PROBE_TIMEOUT_MS, MAX_TIMER_MS);
    await this.client.connect(this.transport, { timeout: sdkTimeout });
    this.client.onerror = (err) => this.transportError(err);
    this.client.setNotificationHandler(ToolListChangedNotificationSchema, () => {
      void this.refresh();
    });
    this.accept(await this.list(sdkTimeout));
  }

  /** The server's tools as last listed (within the limits). */
  get tools(): readonly RemoteTool[] {
    return this.listing;
  }

  /** Tools of the last listing left out by the limits (schema too deep, past `mcp.max_tools`). */
  get refusedTools(): readonly RefusedTool[] {
    return this.refused;
  }

  private accept(remote: readonly RemoteTool[]): void {
    const bounded = boundListing(remote, this.limits);
    this.listing = bounded.tools;
    this.refused = bounded.refused;
  }

  /** The pid of the stdio server's process group leader (the supervisor), if any. */
  get pgid(): number | undefined {
    return this.transport instanceof StdioProcessTransport ? this.transport.pgid : undefined;
  }

  /** Resolves once the re-lists asked for so far (by list_changed) have finished: at most two round trips. */
  settled(): Promise<void> {
    return this.queued ?? this.running ?? Promise.resolve();
  }

  /**
   * List the tools again (list_changed). Coalesced: with a re-list running, one more is
   * queued to run after it, and every further notification joins that queued one. A
   * failure keeps the previous listing.
   */
  refresh(): Promise<void> {
    if (this.queued) return this.queued;
    if (!this.running) return this.relist();
    const queued = this.running.then(() => {
      this.queued = undefined;
      return this.closing || this.lost ? undefined : this.relist();
    });
    this.queued = queued;
    return queued;
  }

  private relist(): Promise<void> {
    const running: Promise<void> = this.list(this.config.startup_timeout_ms)
      .then(
        (tools) => {
          this.accept(tools);
          this.hooks.onToolsChanged();
        },
        () => {},
      )
      .finally(() => {
        if (this.running === running) this.running = undefined;
      });
    this.running = running;
    return running;
  }

  /** Every page of tools/list; stops reading once the listing is far past `mcp.max_tools`. */
  private async list(timeout: number): Promise<RemoteTool[]> {
    const tools: RemoteTool[] = [];
    let cursor: string | undefined;
    for (let page = 0; page < MAX_LIST_PAGES; page++) {
      const result = await this.client.listTools(cursor === undefined ? {} : { cursor }, { timeout });
      for (const tool of result.tools) tools.push(tool);
      cursor = result.nextCursor;
      if (cursor === undefined || tools.length > this.limits.max_tools) return tools;
    }
    throw new McpServerError('protocol', this.config.name, `tools/list returned more than ${MAX_LIST_PAGES} pages`);
  }

  /**
   * Call a remote tool (`meta`: the request's `params._meta`, e.g. a W3C `traceparent`). Resolves with the server's result; rejects with McpServerError
   * ('call_timeout', 'cancelled', 'lost' or 'call_failed').
   */
  async call(tool: string, args: Record<string, unknown>, signal: AbortSignal, meta?: Record<string, string>): Promise<CallToolResult> {
    const timeout = this.config.tool_timeout_ms;
    if (this.lost) throw new McpServerError('lost', this.config.name, 'connection lost');
    const inflight = new AbortController();
    const onAbort = () => inflight.abort(signal.reason);
    signal.addEventListener('abort', onAbort, { once: true });
    this.inflight.add(inflight);
    try {
      const params = meta ? { name: tool, arguments: args, _meta: meta } : { name: tool, arguments: args };
      return (await this.client.callTool(params, undefined, { signal: inflight.signal, timeout })) as CallToolResult;
    } catch (err) {
      throw this.callError(err, signal, timeout);
    } finally {
      signal.removeEventListener('abort', onAbort);
      this.inflight.delete(inflight);
    }
  }

  /**
   * The HTTP transport reports a broken stream through onerror and may leave requests
   * pending for ever (it resumes at most twice). A broken stream is checked with a ping;
   * if that fails, or resuming gave up, the connection is lost.
   */
  private transportError(err: Error): void {
    if (this.config.transport !== 'http' || this.closing || this.lost) return;
    const message = err.message;
    if (message.startsWith('Maximum reconnection attempts')) {
      this.markLost(new McpServerError('crashed', this.config.name, `connection lost: ${message}`));
    } else if (message.startsWith('SSE stream disconnected') && !this.probing) {
      this.probing = true;
      this.client.ping({ timeout: PROBE_TIMEOUT_MS }).then(
        () => (this.probing = false),
        (probe: unknown) => {
          this.probing = false;
          this.markLost(new McpServerError('crashed', this.config.name, `connection lost: ${describe(probe)}`));
        },
      );
    }
  }

  private markLost(error: McpServerError): void {
    if (this.closing || this.lost) return;
    this.lost = true;
    this.lostError = error;
    for (const call of this.inflight) call.abort(error);
    this.hooks.onLost(error);
  }

  private callError(err: unknown, signal: AbortSignal, timeout: number): McpServerError {
    const name = this.config.name;
    if (signal.aborted) return new McpServerError('cancelled', name, 'call cancelled (notifications/cancelled sent)');
    const code = (err as { code?: unknown }).code;
    if (code === -32000 || this.lost) return new McpServerError('lost', name, `connection lost during the call${this.lostSuffix()}`);
    if (code === -32001) return new McpServerError('call_timeout', name, `call timed out after ${timeout} ms (notifications/cancelled sent)`);
    return new McpServerError('call_failed', name, `call failed: ${describe(err)}`);
  }

  private handleClose(): void {
    this.markLost(new McpServerError('crashed', this.config.name, `connection closed${this.exitSuffix()}`));
  }

  /** Why the connection was lost, for a call's error: the exit of a stdio server, or the HTTP cause. */
  private lostSuffix(): string {
    if (this.config.transport === 'http' && this.lostError) return `: ${this.lostError.message.replace(/^MCP server "[^"]*": connection lost: /, '')}`;
    return this.exitSuffix();
  }

  private exitSuffix(): string {
    const t = this.transport;
    const exit = t instanceof StdioProcessTransport ? t.exit : undefined;
    const how = exit ? (exit.signal ? ` (killed by ${exit.signal})` : ` (exit code ${exit.code})`) : '';
    return how + this.diagnosticsSuffix();
  }

  private diagnosticsSuffix(): string {
    const d = this.transport instanceof StdioProcessTransport ? this.transport.diagnostics() : '';
    return d ? `; ${d}` : '';
  }

  private async closeTransport(): Promise<void> {
    try {
      if (this.transport instanceof StreamableHTTPClientTransport && this.transport.sessionId) {
        // Tell the server the session is over, but never wait long for it.
        let timer: NodeJS.Timeout | undefined;
        const bounded = new Promise<void>((resolve) => (timer = setTimeout(resolve, PROBE_TIMEOUT_MS)));
        await Promise.race([this.transport.terminateSession().catch(() => {}), bounded]);
        clearTimeout(timer);
      }
      await this.client.close();
    } catch {
      /* already closed */
    }
    if (this.transport instanceof StdioProcessTransport) await this.transport.close();
  }

  /** End the connection (and the server's process group); pending calls fail as lost. */
  async close(): Promise<void> {
    if (this.closing) return;
    this.closing = true;
    await this.closeTransport();
  }
}

/** An error's message with its cause (fetch failures hide ECONNREFUSED there) or its HTTP status. */
function describe(err: unknown): string {
  if (!(err instanceof Error)) return String(err);
  if (err instanceof StreamableHTTPError && typeof err.code === 'number') return `${err.message} (HTTP ${err.code})`;
  const cause = err.cause as { code?: unknown; message?: unknown } | undefined;
  const why = cause ? String(cause.code ?? cause.message ?? '') : '';
  return why && !err.message.includes(why) ? `${err.message} (${why})` : err.message;
}
