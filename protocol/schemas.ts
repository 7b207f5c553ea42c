/** All wire schemas and types (split across common/ops/events/frames). */
export * from './common.js';
export * from './ops.js';
export * from './events.js';
export * from './frames.js';
export * from './mcp_servers.js';
