/** The body of `/healthz`: connection and stream counters, memory, uptime. */
import type { ServerStats } from './connection.js';
import type { ConnectionRegistry } from './registry.js';

export function healthReport(
  registry: ConnectionRegistry,
  stats: ServerStats,
  startedAt: number,
  extra: Record<string, unknown> = {},
): Record<string, unknown> {
  const mem = process.memoryUsage();
  let bufferedMax = 0;
  let bufferedTotal = 0;
  let attached = 0;
  let behind = 0;
  for (const c of registry.connections()) {
    bufferedMax = Math.max(bufferedMax, c.bufferedAmount);
    bufferedTotal += c.bufferedAmount;
    for (const s of c.streams()) {
      attached++;
      if (!s.live) behind++;
    }
  }
  return {
    ...extra,
    connections: registry.size,
    connections_unauthenticated: registry.unauthenticated,
    tcp_connections: registry.tcpConnections,
    attachments: attached,
    attachments_catching_up: behind,
    stream_fallbacks_total: stats.fallbacks,
    buffered_bytes_max: bufferedMax,
    buffered_bytes_total: bufferedTotal,
    rss_bytes: mem.rss,
    heap_used_bytes: mem.heapUsed,
    uptime_ms: Date.now() - startedAt,
    pid: process.pid,
  };
}
