/**
 * The options that configure a new session from the command line (`agentd new`,
 * `agentd send --new`): --cwd, --route, --policy, --title, and the create_session config
 * they make. A relative --cwd is resolved against the caller's directory, not the daemon's.
 */
import { resolve } from 'node:path';
import { Option, type Command } from 'commander';
import { ApprovalPolicySchema, type ApprovalPolicy, type CreateSessionConfig } from '../../protocol/index.js';

export interface NewSessionFlags {
  cwd?: string;
  route?: string;
  policy?: ApprovalPolicy;
  title?: string;
}

/** Add --cwd / --route / --policy / --title to `cmd`. */
export function addNewSessionOptions(cmd: Command): Command {
  return cmd
    .option('--cwd <dir>', 'working directory of the new session (a relative path is taken from here)')
    .option('--route <route>', 'model route of the new session (default: the config\'s)')
    .addOption(new Option('--policy <policy>', 'approval policy of the new session').choices(ApprovalPolicySchema.options))
    .option('--title <title>', 'title of the new session');
}

/** The `create_session` config the flags ask for (fields left out take the daemon's defaults). */
export function newSessionConfig(flags: NewSessionFlags, cwd = process.cwd()): CreateSessionConfig {
  const config: CreateSessionConfig = {};
  if (flags.cwd) config.cwd = resolve(cwd, flags.cwd);
  if (flags.route) config.model_route = flags.route;
  if (flags.policy) config.approval_policy = flags.policy;
  if (flags.title) config.title = flags.title;
  return config;
}
