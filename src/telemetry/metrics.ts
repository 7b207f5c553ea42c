/**
 * The daemon's Prometheus metrics (docs/operations.md "Metrics"): one prom-client registry
 * per daemon holding the process and event-loop metrics, the counters and histograms the
 * session observer and the model-call wrapper feed, and the gauges read at scrape time
 * from the host, the server, the MCP servers and (cluster mode) the node.
 */
import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client';

/** What the gauges read when scraped; each part is optional (a part not wired is left out). */
export interface MetricSources {
  /** Resident sessions by status, and how many wait for an approval. */
  sessions?: () => { byStatus: Record<string, number>; approvalsPending: number };
  /** Open client connections (WebSocket). */
  connections?: () => number;
  /** MCP server connections by state. */
  mcpServers?: () => Record<string, number>;
  /** Cluster mode: leases this node holds now, and unfinished sessions it took over since it started. */
  cluster?: () => { leasesOwned: number; takeovers: number };
}

/** Distinct values one label may take (tool names come from models): later ones count as "other". */
export const MAX_LABEL_VALUES = 256;
/** Longer tool names count as "other" too. */
export const MAX_LABEL_CHARS = 128;

/** Seconds of a tick's commit: a local SQLite commit is well under a millisecond, a remote database some. */
const COMMIT_SECONDS = [0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5];
const COMMIT_SESSIONS = [1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024];
const MODEL_CALL_SECONDS = [0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 20, 40, 80, 160, 320];

export class AgentdMetrics {
  readonly registry = new Registry();
  readonly batchesCommitted: Counter;
  readonly commitSeconds: Histogram;
  readonly commitSessions: Histogram;
  readonly commitFailures: Counter;
  readonly turns: Counter<'route' | 'outcome'>;
  readonly modelCalls: Counter<'route' | 'outcome'>;
  readonly modelCallSeconds: Histogram<'route'>;
  readonly tokens: Counter<'route' | 'kind'>;
  readonly toolCalls: Counter<'tool' | 'status'>;
  readonly approvals: Counter<'decision'>;
  readonly compactions: Counter<'reason'>;
  private readonly toolNames = new Set<string>();

  /** Read by the gauges at scrape time; wired once the parts exist (the server starts after the host). */
  sources: MetricSources = {};

  /** `cluster`: register the cluster series; `defaultLabels`: on every series (cluster mode: the node id). */
  constructor(options: { cluster?: boolean; defaultLabels?: Record<string, string> } = {}) {
    const defaultLabels = options.defaultLabels ?? {};
    const registers = [this.registry];
    if (Object.keys(defaultLabels).length > 0) this.registry.setDefaultLabels(defaultLabels);
    collectDefaultMetrics({ register: this.registry });
    this.batchesCommitted = new Counter({ name: 'agentd_batches_committed_total', help: 'Event batches committed to the journal', registers });
    this.commitSeconds = new Histogram({
      name: 'agentd_commit_seconds',
      help: "Duration of a writer tick's commit (one transaction for every session with something pending)",
      buckets: COMMIT_SECONDS,
      registers,
    });
    this.commitSessions = new Histogram({ name: 'agentd_commit_sessions', help: "Sessions' writes committed together in one tick", buckets: COMMIT_SESSIONS, registers });
    this.commitFailures = new Counter({ name: 'agentd_commit_failed_writes_total', help: "Sessions' writes a tick's commit refused", registers });
    this.turns = new Counter({ name: 'agentd_turns_total', help: 'Turns ended, by outcome (complete, failed, interrupted) and the route of their last model call', labelNames: ['route', 'outcome'], registers });
    this.modelCalls = new Counter({ name: 'agentd_model_calls_total', help: 'Model calls ended, by route and outcome (ok, or the failure code)', labelNames: ['route', 'outcome'], registers });
    this.modelCallSeconds = new Histogram({ name: 'agentd_model_call_seconds', help: 'Duration of a model call, first request to last chunk', labelNames: ['route'], buckets: MODEL_CALL_SECONDS, registers });
    this.tokens = new Counter({ name: 'agentd_tokens_total', help: 'Tokens reported by providers, by route and kind (input, output, cached, reasoning)', labelNames: ['route', 'kind'], registers });
    this.toolCalls = new Counter({ name: 'agentd_tool_calls_total', help: 'Tool calls ended, by tool and status (ok, error, denied, interrupted)', labelNames: ['tool', 'status'], registers });
    this.approvals = new Counter({ name: 'agentd_approvals_total', help: 'Approvals answered, by decision', labelNames: ['decision'], registers });
    this.compactions = new Counter({ name: 'agentd_compactions_total', help: 'Context compactions, by reason (auto, manual, overflow)', labelNames: ['reason'], registers });
    this.gauges(registers, options.cluster ?? false);
  }

  /** The tool label of a call: its name, or "other" past MAX_LABEL_VALUES distinct names or MAX_LABEL_CHARS characters. */
  toolLabel(tool: string): string {
    if (this.toolNames.has(tool)) return tool;
    if (this.toolNames.size >= MAX_LABEL_VALUES || tool.length > MAX_LABEL_CHARS) return 'other';
    this.toolNames.add(tool);
    return tool;
  }

  /** The exposition text and its content type. */
  async scrape(): Promise<{ contentType: string; body: string }> {
    return { contentType: this.registry.contentType, body: await this.registry.metrics() };
  }

  private gauges(registers: Registry[], cluster: boolean): void {
    const src = (): MetricSources => this.sources;
    new Gauge({
      name: 'agentd_sessions',
      help: 'Sessions resident in memory, by status (idle, running, awaiting_approval)',
      labelNames: ['status'],
      registers,
      collect() {
        for (const [status, n] of Object.entries(src().sessions?.().byStatus ?? {})) this.set({ status }, n);
      },
    });
    new Gauge({
      name: 'agentd_approvals_pending',
      help: 'Resident sessions waiting for an approval',
      registers,
      collect() {
        this.set(src().sessions?.().approvalsPending ?? 0);
      },
    });
    new Gauge({
      name: 'agentd_connections',
      help: 'Open client connections (WebSocket)',
      registers,
      collect() {
        this.set(src().connections?.() ?? 0);
      },
    });
    new Gauge({
      name: 'agentd_mcp_servers',
      help: 'MCP server connections (one per server and cwd; one per server over HTTP), by state',
      labelNames: ['state'],
      registers,
      collect() {
        for (const [state, n] of Object.entries(src().mcpServers?.() ?? {})) this.set({ state }, n);
      },
    });
    if (!cluster) return;
    new Gauge({
      name: 'agentd_leases_owned',
      help: 'Session leases this node holds',
      registers,
      collect() {
        this.set(src().cluster?.().leasesOwned ?? 0);
      },
    });
    new Counter({
      name: 'agentd_takeovers_total',
      help: 'Unfinished sessions this node took over from stopped nodes',
      registers,
      collect() {
        this.reset();
        this.inc(src().cluster?.().takeovers ?? 0);
      },
    });
  }
}
