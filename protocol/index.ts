/** agentd wire protocol v1: limits, zod schemas, types, parsers and encoders. */
export * from './limits.js';
export * from './labels.js';
export * from './schemas.js';
export * from './requests.js';
export * from './parse.js';
export * from './encode.js';
export { buildJsonSchema } from './json-schema.js';
