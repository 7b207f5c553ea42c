/** The `mcp_servers` configuration as the MCP client uses it (defined in the config layer, src/config/mcp_servers.ts). */
export {
  McpServersSchema,
  parseMcpServers,
  resolveMcpServers,
  McpConfigError,
  DEFAULT_STARTUP_TIMEOUT_MS,
  DEFAULT_TOOL_TIMEOUT_MS,
  type McpServerConfig,
  type McpApproval,
} from '../config/mcp_servers.js';
