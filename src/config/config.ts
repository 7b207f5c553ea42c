/**
 * The daemon's configuration file (docs/configuration.md): schema, defaults and loading.
 * Validation errors name the offending field.
 */
import { readFileSync, existsSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { z } from 'zod';
import { ApprovalPolicySchema, IDENTIFIER_PATTERN, IDENTIFIER_RULE, LIMITS, ShellRuleSchema, TokenBudgetSchema, utf8Bytes } from '../../protocol/index.js';
import { ConfigError } from '../errors.js';
import { thinkingBudget } from '../model/anthropic_request.js';
import type { ModelRoute } from '../model/types.js';
import { McpServersSchema } from './mcp_servers.js';

const PositiveInt = z.int().positive();

const RouteSchema = z.strictObject({
  provider: z.enum(['scripted', 'openai', 'anthropic']),
  model: z.string().min(1).optional(),
  base_url: z.url().optional(),
  api_key_env: z.string().min(1).optional(),
  context_window: z.int().positive().optional(),
  reasoning_efforts: z.array(z.string().min(1)).optional(),
  // anthropic routes (docs/models.md "Anthropic"): the reply's output-token limit.
  max_tokens: z.int().positive().optional(),
  // context: this route's system prompt (docs/context.md), sent verbatim.
  system_prompt: z.string().min(1).optional(),
  // openai routes (docs/models.md): false sends non-streaming requests (servers without SSE).
  stream: z.boolean().optional(),
});

// ---- context block (engineer "context"): system prompt and compaction (docs/context.md, docs/context.md) ----
/** A system prompt in the config: the text, or `{file}` read at start-up (relative to the config file). */
const SystemPromptSchema = z.union([z.string().min(1), z.strictObject({ file: z.string().min(1) })]);
/** Defaults of the `compaction` block. */
export const COMPACTION_DEFAULTS = { threshold: 0.8, keep_recent_tokens: 20_000, max_failures: 2 } as const;
const CompactionSchema = z
  .strictObject({
    /** Compact before a model call whose estimate exceeds threshold × the route's context_window. */
    threshold: z.number().gt(0).lte(1).default(COMPACTION_DEFAULTS.threshold),
    /** Tokens of the most recent items kept verbatim (never more than a quarter of the window). */
    keep_recent_tokens: z.int().min(0).default(COMPACTION_DEFAULTS.keep_recent_tokens),
    /** The route that writes summaries (default: the session's current route). */
    route: z.string().regex(IDENTIFIER_PATTERN, `route names are ${IDENTIFIER_RULE}`).optional(),
    /** Failed compactions in a row after which the session stops trying (the circuit breaker). */
    max_failures: PositiveInt.default(COMPACTION_DEFAULTS.max_failures),
  })
  .prefault({});
// ---- end of the context block ----


// ---- server block (engineer "server"): connection limits and the Host/Origin check ----
/** Defaults of the `server` block (also what startServer uses when given none). */
export const SERVER_DEFAULTS = {
  max_connections: 512,
  max_unauthenticated: 128,
  auth_deadline_ms: 5000,
  hello_max_bytes: 64 * 1024,
} as const;
const OriginSchema = z
  .string()
  .refine((v) => v === 'null' || /^[a-z][a-z0-9+.-]*:\/\/[^/?#\s]+$/i.test(v), 'must be an origin like "https://host[:port]" (no path)');
const ServerSchema = z
  .strictObject({
    allowed_origins: z.array(OriginSchema).default([]),
    allowed_hosts: z.array(z.string().regex(/^[^\s/?#@]+$/, 'must be a host name, optionally with ":port"')).default([]),
    max_connections: PositiveInt.max(1_000_000).default(SERVER_DEFAULTS.max_connections),
    max_unauthenticated: PositiveInt.max(1_000_000).default(SERVER_DEFAULTS.max_unauthenticated),
    auth_deadline_ms: PositiveInt.max(600_000).default(SERVER_DEFAULTS.auth_deadline_ms),
    hello_max_bytes: z.int().min(1024).max(LIMITS.frameMaxBytes).default(SERVER_DEFAULTS.hello_max_bytes),
    // obs: GET /metrics without the token (docs/operations.md)
    metrics_public: z.boolean().default(false),
  })
  .prefault({});
// ---- end of the server block ----

/** Tools' configuration (engineer "tools"): the shell's environment (src/tools/env.ts). */
const ToolsSchema = z
  .strictObject({
    shell: z
      .strictObject({
        /** Variables set for every shell command (they win over inherited ones). */
        env: z.record(z.string().regex(/^[^=\0]+$/, 'variable names must not contain "=" or NUL'), z.string()).default({}),
        /** "minimal" (the allowlist), "all" (the daemon's environment), or the allowlist plus these names. */
        inherit_env: z.union([z.enum(['minimal', 'all']), z.array(z.string().min(1))]).default('minimal'),
        /** Commands that never wait for approval under `ask` (docs/tools.md "Shell allow rules"). */
        allow: z.array(ShellRuleSchema).max(LIMITS.shellAllowMaxRules).default([]),
      })
      .prefault({}),
  })
  .prefault({});

// ---- telemetry block (engineer "obs"): OpenTelemetry traces (docs/operations.md) ----
const TelemetrySchema = z
  .strictObject({
    /** OTLP/HTTP endpoint of a collector (e.g. http://localhost:4318); $OTEL_EXPORTER_OTLP_ENDPOINT wins. Absent: no traces. */
    otlp_endpoint: z.url({ protocol: /^https?$/ }).optional(),
    /** Put message contents, tool arguments and tool results on spans. */
    record_content: z.boolean().default(false),
    /** `service.name` of the spans ($OTEL_SERVICE_NAME wins). */
    service_name: z.string().min(1).default('agentd'),
  })
  .prefault({});
// ---- end of the telemetry block ----

// ---- notify block (engineer "notify"): the notification webhook (docs/sessions.md#notifications) ----
export const NOTIFY_EVENTS = ['approval', 'turn_complete', 'turn_failed'] as const;
export type NotifyEvent = (typeof NOTIFY_EVENTS)[number];
const NotifySchema = z.strictObject({
  /** Where each notification is POSTed (http or https). */
  url: z.url({ protocol: /^https?$/ }),
  /** Which events notify (default: only an approval waiting). */
  events: z.array(z.enum(NOTIFY_EVENTS)).min(1).default(['approval']),
  /** The environment variable holding the HMAC-SHA256 signing secret; absent: unsigned. */
  secret_env: z.string().regex(/^[A-Za-z_][A-Za-z0-9_]*$/).optional(),
  /** `json` (the payload as JSON) or `ntfy` (a plain-text body with Title/Priority/Tags headers, for ntfy.sh). */
  format: z.enum(['json', 'ntfy']).default('json'),
});
export type NotifyConfig = z.infer<typeof NotifySchema>;
// ---- end of the notify block ----

export const ConfigSchema = z.strictObject({
  models: z
    .strictObject({
      default: z.string().min(1).default('scripted'),
      routes: z.record(z.string().regex(IDENTIFIER_PATTERN, `route names are ${IDENTIFIER_RULE}`), RouteSchema).default({}),
    })
    .prefault({}),
  approval_policy: ApprovalPolicySchema.default('ask'),
  workspace: z.string().min(1).optional(),
  limits: z
    .strictObject({
      inbox_capacity: PositiveInt.max(100_000).default(LIMITS.inboxCapacity),
      max_model_steps: PositiveInt.default(LIMITS.maxModelSteps),
      model_idle_timeout_ms: PositiveInt.default(60_000),
      max_output_recovery_attempts: z.int().min(0).default(2),
      doom_loop_threshold: z.int().min(2).default(3),
      // parallel (docs/tools.md): tool calls of one model step that run at the same time
      max_parallel_tools: PositiveInt.max(256).default(8),
      shell_timeout_ms: PositiveInt.default(120_000),
      shell_output_cap_bytes: PositiveInt.default(1024 * 1024),
      evict_idle_ms: z.int().min(0).default(30_000),
      // core: admitted messages waiting for their own turn (docs/architecture.md)
      max_queued_turns: PositiveInt.max(100_000).default(LIMITS.maxQueuedTurns),
      // tools2: how deep subagents may nest (docs/tools.md): a session at this depth gets no delegate
      max_subagent_depth: z.int().min(0).max(16).default(LIMITS.maxSubagentDepth),
      // tools (docs/tools.md): every new session's token budget (input + output tokens); absent: none
      session_token_budget: TokenBudgetSchema.optional(),
    })
    .prefault({}),
  // Deleting idle sessions (docs/sessions.md#retention); absent: sessions are kept until deleted
  retention: z
    .strictObject({
      delete_after_days: z.int().min(1).max(36_500).optional(),
    })
    .prefault({}),
  recovery: z
    .strictObject({
      policy: z.enum(['continue', 'interrupt']).default('continue'),
      max_recovery_attempts: z.int().min(0).default(3),
    })
    .prefault({}),
  journal: z
    .strictObject({
      synchronous: z.enum(['NORMAL', 'FULL']).default('NORMAL'),
      group_commit_ms: z.int().min(0).max(1000).default(2),
      // cluster (docs/cluster.md): "postgres" puts the journal in a shared PostgreSQL database
      backend: z.enum(['sqlite', 'postgres']).default('sqlite'),
      url: z.string().min(1).optional(),
    })
    .prefault({})
    .refine((j) => j.backend !== 'postgres' || j.url !== undefined, {
      message: 'journal.url is required with journal.backend "postgres"',
      path: ['url'],
    }),
  // cluster (docs/cluster.md): this node when the journal is on PostgreSQL
  cluster: z
    .strictObject({
      node_id: z.string().regex(/^[A-Za-z0-9][A-Za-z0-9._-]{0,62}$/, 'letters, digits, . _ - (at most 63)').optional(),
      advertise_url: z.string().regex(/^wss?:\/\/[^\s/]+$/, 'ws://HOST:PORT or wss://HOST:PORT').optional(),
      secret_env: z.string().regex(/^[A-Za-z_][A-Za-z0-9_]*$/).default('AGENTD_CLUSTER_SECRET'),
      lease_ms: z.int().min(500).max(600_000).default(3000),
      heartbeat_ms: z.int().min(100).max(60_000).default(1000),
    })
    .prefault({})
    .refine((c) => c.heartbeat_ms * 2 <= c.lease_ms, { message: 'cluster.heartbeat_ms must be at most half of cluster.lease_ms', path: ['heartbeat_ms'] }),
  server: ServerSchema,
  tools: ToolsSchema,
  // tools2: MCP servers (docs/tools.md), schema in ./mcp_servers.ts
  mcp_servers: McpServersSchema,
  system_prompt: SystemPromptSchema.optional(),
  /** Append the nearest AGENTS.md to every system prompt (docs/context.md). */
  project_instructions: z.boolean().default(true),
  compaction: CompactionSchema,
  telemetry: TelemetrySchema,
  notify: NotifySchema.optional(),
});

export type Config = z.infer<typeof ConfigSchema>;

/**
 * Parse a config object; throws ConfigError naming the first bad field. A top-level
 * `system_prompt: {file}` is read here (relative to `baseDir`) and replaced by its text.
 */
export function parseConfig(raw: unknown, source = 'config', baseDir = process.cwd()): Config {
  const result = ConfigSchema.safeParse(raw ?? {});
  if (!result.success) {
    const issue = result.error.issues[0]!;
    const path = issue.path.length ? issue.path.join('.') : '(root)';
    throw new ConfigError(`${source}: ${path}: ${issue.message}`);
  }
  const config = result.data;
  const routes = resolveRoutes(config);
  if (!routes.has(config.models.default)) {
    throw new ConfigError(`${source}: models.default: no route named "${config.models.default}"`);
  }
  for (const [name, route] of Object.entries(config.models.routes)) {
    if ((route.provider === 'openai' || route.provider === 'anthropic') && !route.model) {
      throw new ConfigError(`${source}: models.routes.${name}.model: required for provider "${route.provider}"`);
    }
    checkAnthropicRoute(route, `${source}: models.routes.${name}`);
    if (route.system_prompt !== undefined) checkPromptSize(route.system_prompt, `${source}: models.routes.${name}.system_prompt`);
  }
  if (config.compaction.route !== undefined && !routes.has(config.compaction.route)) {
    throw new ConfigError(`${source}: compaction.route: no route named "${config.compaction.route}"`);
  }
  if (config.system_prompt !== undefined) config.system_prompt = readSystemPrompt(config.system_prompt, source, baseDir);
  return config;
}

function checkPromptSize(text: string, where: string): void {
  if (utf8Bytes(text) > LIMITS.systemPromptMaxBytes) {
    throw new ConfigError(`${where}: at most ${LIMITS.systemPromptMaxBytes} bytes (a system prompt is limited to 64 KiB)`);
  }
}

/** The top-level system prompt's text (a `{file}` is read now, at start-up). */
function readSystemPrompt(value: z.infer<typeof SystemPromptSchema>, source: string, baseDir: string): string {
  let text: string;
  if (typeof value === 'string') text = value;
  else {
    const path = resolve(baseDir, value.file);
    try {
      text = readFileSync(path, 'utf8');
    } catch (err) {
      throw new ConfigError(`${source}: system_prompt.file: cannot read "${path}": ${(err as Error).message}`);
    }
    if (text.length === 0) throw new ConfigError(`${source}: system_prompt.file: "${path}" is empty`);
  }
  checkPromptSize(text, `${source}: system_prompt`);
  return text;
}

/** The configured top-level system prompt (already read from its file), or null. */
export function configSystemPrompt(config: Config): string | null {
  return typeof config.system_prompt === 'string' ? config.system_prompt : null;
}

/** Anthropic route fields: `max_tokens` only there, every reasoning effort mapped to a thinking budget. */
function checkAnthropicRoute(route: z.infer<typeof RouteSchema>, where: string): void {
  if (route.provider !== 'anthropic') {
    if (route.max_tokens !== undefined) throw new ConfigError(`${where}.max_tokens: only for provider "anthropic"`);
    if (route.stream !== undefined && route.provider !== 'openai') throw new ConfigError(`${where}.stream: only for provider "openai"`);
    return;
  }
  if (route.stream !== undefined) throw new ConfigError(`${where}.stream: only for provider "openai"`);
  for (const effort of route.reasoning_efforts ?? []) {
    try {
      thinkingBudget(effort);
    } catch (err) {
      throw new ConfigError(`${where}.reasoning_efforts: ${(err as Error).message}`);
    }
  }
}

/** The embedded defaults: the scripted model, approval policy ask. */
export function defaultConfig(): Config {
  return parseConfig({});
}

/**
 * Load `--config FILE` if given, else DATA_DIR/config.json if present, else defaults.
 * Throws ConfigError with the file name and field on any problem.
 */
export function loadConfig(dataDir: string, file?: string): Config {
  const path = file ?? join(dataDir, 'config.json');
  if (!file && !existsSync(path)) return defaultConfig();
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (err) {
    throw new ConfigError(`${path}: cannot read: ${(err as Error).message}`);
  }
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch (err) {
    throw new ConfigError(`${path}: not valid JSON: ${(err as Error).message}`);
  }
  return parseConfig(raw, path, dirname(path));
}

/** All routes by name, the embedded `scripted` route always included. */
export function resolveRoutes(config: Config): Map<string, ModelRoute> {
  const routes = new Map<string, ModelRoute>();
  routes.set('scripted', { route: 'scripted', provider: 'scripted', model: 'scripted', context_window: null });
  for (const [name, r] of Object.entries(config.models.routes)) {
    routes.set(name, {
      route: name,
      provider: r.provider,
      model: r.model ?? name,
      ...(r.base_url !== undefined && { base_url: r.base_url }),
      ...(r.api_key_env !== undefined && { api_key_env: r.api_key_env }),
      context_window: r.context_window ?? null,
      ...(r.reasoning_efforts !== undefined && { reasoning_efforts: r.reasoning_efforts }),
      ...(r.max_tokens !== undefined && { max_tokens: r.max_tokens }),
      ...(r.system_prompt !== undefined && { system_prompt: r.system_prompt }),
      ...(r.stream === false && { stream: false as const }),
    });
  }
  return routes;
}
