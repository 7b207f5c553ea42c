/**
 * One live connection to one MCP server through the SDK `Client`: connect (spawn or
 * HTTP) and list its tools within the startup timeout, re-list on
 * `notifications/tools/list_changed`, call a tool with a timeout and an abort signal
 * (the SDK sends `notifications/cancelled` on either), close. An unexpected end of the
 * connection is reported once through `onLost` with a readable reason.
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport, StreamableHTTPError } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import { ToolListChangedNotificationSchema, type CallToolResult, type Tool as RemoteTool } from '@modelcontextprotocol/sdk/types.js';
import type { McpServerConfig } from './config.js';
import { McpServerError } from './errors.js';
import { StdioProcessTransport } from './stdio.js';

const CLIENT_INFO = { name: 'agentd', version: '0.1.0' };
/** Pages of tools/list followed before giving up (a server that never stops paging). */
const MAX_LIST_PAGES = 100;
/** How long a ping may take when an HTTP stream broke before the connection counts as lost; also the most close() waits for an HTTP session's DELETE. */
const PROBE_TIMEOUT_MS = 2000;

export interface ConnectionHooks {
  /** The tool listing changed (after a list_changed notification was honoured). */
  onToolsChanged(): void;
  /** The connection ended without close() (crash, exit, HTTP failure). Called once. */
  onLost(error: McpServerError): void;
}

export interface LaunchContext {
  cwd: string;
  env: Readonly<Record<string, string>>;
}

export class McpConnection {
  private listing: RemoteTool[] = [];
  private refreshing: Promise<void> | undefined;
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
  ) {}

  /** Start the server and list its tools, all within `startup_timeout_ms`. */
  static async open(config: McpServerConfig, launch: LaunchContext, hooks: ConnectionHooks, cancel?: AbortSignal): Promise<McpConnection> {
    const transport: Transport =
      config.transport === 'stdio'
        ? new StdioProcessTransport({ command: config.command, args: config.args, cwd: launch.cwd, env: { ...launch.env, ...config.env } })
        : new StreamableHTTPClientTransport(new URL(config.url), { requestInit: { headers: { ...config.headers } } });
    const client = new Client(CLIENT_INFO, { capabilities: {} });
    const conn = new McpConnection(config, client, transport, hooks);
    const timeout = config.startup_timeout_ms;
    const abort = new AbortController();
    let timer: NodeJS.Timeout | undefined;
    const expired = new Promise<never>((_, reject) => {
      timer = setTimeout(() => {
        abort.abort();
        reject(new McpServerError('startup_timeout', config.name, `did not start within ${timeout} ms${conn.diagnosticsSuffix()}`));
      }, timeout);
    });
    const exited = new Promise<never>((_, reject) => {
      cancel?.addEventListener('abort', () => {
        abort.abort();
        reject(new McpServerError('start_failed', config.name, 'closed during start-up'));
      });
      client.onclose = () => {
        // A stdio server that exits says more (exit code, stderr) than the pending request's error.
        if (config.transport === 'stdio' && !conn.closing && !conn.lost) {
          reject(new McpServerError('start_failed', config.name, `exited during start-up${conn.exitSuffix()}`));
        }
        conn.handleClose();
      };
    });
    try {
      await Promise.race([conn.handshake(abort.signal, timeout), expired, exited]);
      return conn;
    } catch (err) {
      conn.closing = true;
      await conn.closeTransport();
      if (err instanceof McpServerError) throw err;
      throw new McpServerError('start_failed', config.name, `failed to start: ${describe(err)}${conn.diagnosticsSuffix()}`);
    } finally {
      clearTimeout(timer);
      expired.catch(() => {});
      exited.catch(() => {});
    }
  }

  private async handshake(signal: AbortSignal, timeout: number): Promise<void> {
    await this.client.connect(this.transport, { signal, timeout });
    this.client.onerror = (err) => this.transportError(err);
    this.client.setNotificationHandler(ToolListChangedNotificationSchema, () => {
      void this.refresh().then(() => this.hooks.onToolsChanged());
    });
    this.listing = await this.list(signal, timeout);
  }

  /** The server's tools as last listed. */
  get tools(): readonly RemoteTool[] {
    return this.listing;
  }

  /** The pid of the stdio server's process group leader (the supervisor), if any. */
  get pgid(): number | undefined {
    return this.transport instanceof StdioProcessTransport ? this.transport.pgid : undefined;
  }

  /** Resolves once a re-list triggered by list_changed (if any) has finished. */
  settled(): Promise<void> {
    return this.refreshing ?? Promise.resolve();
  }

  /** List the tools again (list_changed), after any re-list in progress; a failure keeps the previous listing. */
  refresh(): Promise<void> {
    const relist = async () => {
      this.listing = await this.list(undefined, this.config.startup_timeout_ms);
    };
    const current: Promise<void> = (this.refreshing ?? Promise.resolve())
      .then(relist)
      .catch(() => {})
      .finally(() => {
        if (this.refreshing === current) this.refreshing = undefined;
      });
    this.refreshing = current;
    return current;
  }

  private async list(signal: AbortSignal | undefined, timeout: number): Promise<RemoteTool[]> {
    const tools: RemoteTool[] = [];
    let cursor: string | undefined;
    for (let page = 0; page < MAX_LIST_PAGES; page++) {
      const result = await this.client.listTools(cursor === undefined ? {} : { cursor }, { timeout, ...(signal && { signal }) });
      tools.push(...result.tools);
      cursor = result.nextCursor;
      if (cursor === undefined) return tools;
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
