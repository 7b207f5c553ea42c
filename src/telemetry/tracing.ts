/**
 * OpenTelemetry tracing (docs/operations.md "Traces"): a tracer provider exporting over
 * OTLP/HTTP in batches, started only when an endpoint is configured
 * ($OTEL_EXPORTER_OTLP_ENDPOINT, $OTEL_EXPORTER_OTLP_TRACES_ENDPOINT or
 * `telemetry.otlp_endpoint`). Loaded by the daemon only then: without an endpoint the SDK
 * is never imported.
 */
import type { Tracer } from '@opentelemetry/api';

export interface TracingOptions {
  /** `telemetry.otlp_endpoint`: the collector's base URL (the exporter appends /v1/traces). */
  endpoint?: string;
  serviceName: string;
  serviceVersion: string;
  /** Extra resource attributes (cluster mode: the node id). */
  attributes?: Record<string, string>;
  env?: NodeJS.ProcessEnv;
}

export interface Tracing {
  tracer: Tracer;
  /** Export what is buffered and stop (the daemon's shutdown). */
  shutdown(): Promise<void>;
}

/** Whether traces are configured: an OTLP endpoint in the environment or the config, and the SDK not disabled. */
export function tracingWanted(endpoint: string | undefined, env: NodeJS.ProcessEnv = process.env): boolean {
  if ((env.OTEL_SDK_DISABLED ?? '').trim().toLowerCase() === 'true') return false;
  return Boolean(env.OTEL_EXPORTER_OTLP_ENDPOINT || env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT || endpoint);
}

/** Start the SDK: a BasicTracerProvider with a BatchSpanProcessor and the OTLP/HTTP (JSON) exporter. */
export async function startTracing(options: TracingOptions): Promise<Tracing> {
  const env = options.env ?? process.env;
  const [{ BasicTracerProvider, BatchSpanProcessor }, { OTLPTraceExporter }, { resourceFromAttributes }, { ATTR_SERVICE_NAME, ATTR_SERVICE_VERSION }] =
    await Promise.all([
      import('@opentelemetry/sdk-trace-base'),
      import('@opentelemetry/exporter-trace-otlp-http'),
      import('@opentelemetry/resources'),
      import('@opentelemetry/semantic-conventions'),
    ]);
  // The environment's endpoint wins (the exporter reads it, and its headers, itself).
  const fromEnv = Boolean(env.OTEL_EXPORTER_OTLP_ENDPOINT || env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT);
  const url = !fromEnv && options.endpoint ? `${options.endpoint.replace(/\/+$/, '')}/v1/traces` : undefined;
  const exporter = new OTLPTraceExporter(url ? { url } : {});
  const provider = new BasicTracerProvider({
    resource: resourceFromAttributes({
      [ATTR_SERVICE_NAME]: env.OTEL_SERVICE_NAME || options.serviceName,
      [ATTR_SERVICE_VERSION]: options.serviceVersion,
      ...options.attributes,
    }),
    spanProcessors: [new BatchSpanProcessor(exporter, { scheduledDelayMillis: 1000 })],
  });
  return {
    tracer: provider.getTracer('agentd', options.serviceVersion),
    shutdown: () => provider.shutdown(),
  };
}
