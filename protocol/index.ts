/** agentd wire protocol v1: limits, zod schemas, types and parsers. */
export * from './limits.js';
export * from './schemas.js';
export * from './parse.js';
export { buildJsonSchema } from './json-schema.js';
