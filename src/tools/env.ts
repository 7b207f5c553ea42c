/**
 * The environment of every process a tool spawns (the shell now, MCP stdio servers later):
 * an allowlist of harmless variables from the daemon's environment, plus the configured
 * `tools.shell.env`. `inherit_env: "all"` passes the daemon's whole environment instead,
 * still without the daemon's own credentials; a list of names adds those to the allowlist.
 */
import type { Config } from '../config/config.js';

/** How much of the daemon's environment a spawned process inherits. */
export type InheritEnv = Config['tools']['shell']['inherit_env'];

export interface EnvPolicy {
  inherit: InheritEnv;
  /** Variables set explicitly (configuration); they win over inherited ones. */
  set: Readonly<Record<string, string>>;
  /** The daemon's credentials (routes' `api_key_env`): never inherited, even under "all". */
  secretNames: readonly string[];
}

/** Names a process inherits under "minimal": what programs need to behave, nothing that authenticates. */
export const ALLOWED_ENV: readonly string[] = [
  'PATH',
  'HOME',
  'USER',
  'LOGNAME',
  'SHELL',
  'LANG',
  'LANGUAGE',
  'TERM',
  'COLORTERM',
  'NO_COLOR',
  'TZ',
  'TMPDIR',
  'TMP',
  'TEMP',
];

/** The daemon's own variables (`AGENTD_TOKEN`, ...) are never passed on by inheritance. */
const DAEMON_OWN = /^AGENTD_/;

function allowed(name: string, extra: readonly string[]): boolean {
  return ALLOWED_ENV.includes(name) || name.startsWith('LC_') || extra.includes(name);
}

/** The environment for a spawned tool process under `policy`, built from `from` (the daemon's). */
export function toolEnv(policy: EnvPolicy, from: NodeJS.ProcessEnv = process.env): Record<string, string> {
  const extra = Array.isArray(policy.inherit) ? policy.inherit : [];
  const env: Record<string, string> = {};
  for (const [name, value] of Object.entries(from)) {
    if (value === undefined || DAEMON_OWN.test(name) || policy.secretNames.includes(name)) continue;
    if (policy.inherit === 'all' || allowed(name, extra)) env[name] = value;
  }
  return { ...env, ...policy.set };
}

/** The shell's environment policy from configuration. */
export function shellEnvPolicy(config: Config): EnvPolicy {
  return {
    inherit: config.tools.shell.inherit_env,
    set: config.tools.shell.env,
    secretNames: Object.values(config.models.routes).flatMap((r) => (r.api_key_env ? [r.api_key_env] : [])),
  };
}
