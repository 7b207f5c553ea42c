/**
 * The daemon's telemetry (docs/operations.md): Prometheus metrics, always collected and
 * answered at GET /metrics, and OpenTelemetry traces over OTLP/HTTP when an endpoint is
 * configured. `startTelemetry` builds both; the host gets `observer`, the server
 * `scrape`, and the parts built later are wired with `wire`.
 */
import type { Config } from '../config/config.js';
import { AgentdMetrics, type MetricSources } from './metrics.js';
import { TelemetryObserver } from './observer.js';
import { TraceBook } from './spans.js';
import { startTracing, tracingWanted, type Tracing } from './tracing.js';

export { AgentdMetrics, type MetricSources } from './metrics.js';
export { TelemetryObserver } from './observer.js';

export interface TelemetryOptions {
  config: Config;
  version: string;
  /** Cluster mode: this node's id (a label on every series, a resource attribute of every span). */
  nodeId?: string;
  env?: NodeJS.ProcessEnv;
}

export interface Telemetry {
  readonly metrics: AgentdMetrics;
  readonly observer: TelemetryObserver;
  /** Whether spans are exported. */
  readonly tracing: boolean;
  /** Where the gauges read from, once those parts exist. */
  wire(sources: MetricSources): void;
  /** The /metrics answer. */
  scrape(): Promise<{ contentType: string; body: string }>;
  /** Export the spans still buffered (the daemon's shutdown). */
  shutdown(): Promise<void>;
}

export async function startTelemetry(options: TelemetryOptions): Promise<Telemetry> {
  const { config, nodeId } = options;
  const env = options.env ?? process.env;
  const metrics = new AgentdMetrics({ cluster: nodeId !== undefined, ...(nodeId !== undefined && { defaultLabels: { node_id: nodeId } }) });
  let tracing: Tracing | null = null;
  if (tracingWanted(config.telemetry.otlp_endpoint, env)) {
    tracing = await startTracing({
      ...(config.telemetry.otlp_endpoint !== undefined && { endpoint: config.telemetry.otlp_endpoint }),
      serviceName: config.telemetry.service_name,
      serviceVersion: options.version,
      ...(nodeId !== undefined && { attributes: { 'service.instance.id': nodeId } }),
      env,
    });
  }
  const traces = tracing ? new TraceBook(tracing.tracer, config.telemetry.record_content) : null;
  const observer = new TelemetryObserver(metrics, traces);
  return {
    metrics,
    observer,
    tracing: tracing !== null,
    wire: (sources) => {
      metrics.sources = { ...metrics.sources, ...sources };
    },
    scrape: () => metrics.scrape(),
    shutdown: async () => {
      await tracing?.shutdown();
    },
  };
}
