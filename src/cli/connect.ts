/**
 * Connecting a client subcommand (attach, send, sessions) to the daemon: the
 * --url / --token / --data-dir options, and connecting with helpful errors.
 */
import { Option, type Command } from 'commander';
import { AgentdClient, type ClientOptions } from '../client/client.js';
import { describeError } from '../client/errors.js';
import { endpointHint, resolveEndpoint, type EndpointOptions } from '../client/endpoint.js';
import { CliExit, EXIT } from './exit.js';

export interface ConnectionFlags {
  url?: string;
  token?: string;
  dataDir?: string;
}

/** Add --url / --token / --data-dir to a subcommand; usage errors exit 2 (help/version 0). */
export function addConnectionOptions(cmd: Command): void {
  cmd
    .exitOverride((err) => {
      process.exit(err.exitCode === 0 ? 0 : EXIT.usage);
    })
    .addOption(new Option('--url <url>', 'daemon URL (default: $AGENTD_URL, else DATA_DIR/daemon.json)'))
    .addOption(new Option('--token <token>', 'client token (default: $AGENTD_TOKEN, else DATA_DIR/token)'))
    .addOption(new Option('--data-dir <dir>', 'data directory of the daemon (default: $AGENTD_HOME or ~/.local/share/agentd)'));
}

function endpointOptions(flags: ConnectionFlags): EndpointOptions {
  const o: EndpointOptions = {};
  if (flags.url) o.url = flags.url;
  if (flags.token) o.token = flags.token;
  if (flags.dataDir) o.dataDir = flags.dataDir;
  return o;
}

/**
 * Connect a client to the daemon named by the flags. Reconnects re-read daemon.json
 * (a daemon restarted on another port is found). Throws CliExit(2) when it cannot connect.
 */
export async function connectClient(
  flags: ConnectionFlags,
  clientName: string,
  extra: Partial<ClientOptions> = {},
): Promise<AgentdClient> {
  const eo = endpointOptions(flags);
  const endpoint = resolveEndpoint(eo);
  let last = { url: endpoint.url, token: endpoint.token };
  const options: ClientOptions = {
    url: endpoint.url,
    clientName,
    ...extra,
    refresh: () => {
      const e = resolveEndpoint(eo);
      // While the daemon is down its daemon.json may be gone: keep the last known URL.
      if (e.urlSource !== 'default') last = { url: e.url, token: e.token ?? last.token };
      return last;
    },
  };
  if (endpoint.token) options.token = endpoint.token;
  const client = new AgentdClient(options);
  try {
    await client.start();
  } catch (err) {
    const hint = endpointHint(endpoint);
    throw new CliExit(`${describeError(err)}${hint ? `\n  (${hint})` : ''}`, EXIT.usage);
  }
  return client;
}
