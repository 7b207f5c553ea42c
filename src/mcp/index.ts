/** The MCP client module (docs/tools.md): configuration, the manager, the per-session toolset. */
export { McpServersSchema, parseMcpServers, resolveMcpServers, McpConfigError, type McpServerConfig, type McpApproval } from './config.js';
export { McpManager, type McpManagerOptions, type OwnMcpServers } from './manager.js';
export { McpToolset, mustAsk, type McpTool, type McpWarning, type McpServerStatus } from './toolset.js';
export { McpServerError, type McpFailureKind } from './errors.js';
export { exposedNames, sanitizeName, MAX_TOOL_NAME } from './naming.js';
export { convertResult } from './result.js';
export { killAllServerGroups } from './groups.js';
