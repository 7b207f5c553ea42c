/**
 * Connecting a client subcommand (attach, send, watch, …) to the daemon: the
 * --url / --token / --data-dir options, and connecting with helpful errors. Several
 * addresses (`--url` repeated or comma-separated, or `AGENTD_URL=a,b`) are tried in turn,
 * and in cluster mode the client learns the live nodes and fails over to them
 * (src/client/addresses.ts).
 */
import { Option, type Command } from 'commander';
import { AgentdClient, type ClientOptions } from '../client/client.js';
import { DaemonAddresses, parseUrlList } from '../client/addresses.js';
import { describeError } from '../client/errors.js';
import { endpointHint, resolveEndpoint, type EndpointOptions } from '../client/endpoint.js';
import { CliExit, EXIT } from './exit.js';

export interface ConnectionFlags {
  /** Every --url given (each may be a comma-separated list). */
  url?: string[];
  token?: string;
  dataDir?: string;
}

/** Add --url / --token / --data-dir to a subcommand; usage errors exit 2 (help/version 0). */
export function addConnectionOptions(cmd: Command): void {
  cmd
    .exitOverride((err) => {
      process.exit(err.exitCode === 0 ? 0 : EXIT.usage);
    })
    .addOption(
      new Option('--url <url>', 'daemon URL; repeat it or separate URLs with commas to give several (default: $AGENTD_URL, else DATA_DIR/daemon.json)').argParser(
        (value: string, previous: string[] | undefined) => [...(previous ?? []), value],
      ),
    )
    .addOption(new Option('--token <token>', 'client token (default: $AGENTD_TOKEN, else DATA_DIR/token)'))
    .addOption(new Option('--data-dir <dir>', 'data directory of the daemon (default: $AGENTD_HOME or ~/.local/share/agentd)'));
}

/** The addresses given by --url, else $AGENTD_URL (both may list several); empty when neither. */
export function givenUrls(flags: ConnectionFlags, env: NodeJS.ProcessEnv = process.env): string[] {
  try {
    return parseUrlList(flags.url?.length ? flags.url : env.AGENTD_URL);
  } catch (err) {
    throw new CliExit(`not a daemon URL: ${(err as Error).message}`, EXIT.usage);
  }
}

function endpointOptions(flags: ConnectionFlags): EndpointOptions {
  const o: EndpointOptions = {};
  const urls = givenUrls(flags);
  if (urls[0] !== undefined) o.url = urls[0];
  if (flags.token) o.token = flags.token;
  if (flags.dataDir) o.dataDir = flags.dataDir;
  return o;
}

/**
 * Connect a client to the daemon named by the flags. Given addresses are tried in turn
 * (and a cluster's live nodes learned); without any, reconnects re-read daemon.json (a
 * daemon restarted on another port is found). Throws CliExit(2) when it cannot connect.
 */
export async function connectClient(
  flags: ConnectionFlags,
  clientName: string,
  extra: Partial<ClientOptions> = {},
): Promise<AgentdClient> {
  const eo = endpointOptions(flags);
  const endpoint = resolveEndpoint(eo);
  const urls = givenUrls(flags);
  let last = { url: endpoint.url, token: endpoint.token };
  const options: ClientOptions = {
    url: endpoint.url,
    clientName,
    ...extra,
    addresses: new DaemonAddresses(urls.length > 0 ? urls : [endpoint.url]),
  };
  if (urls.length === 0) {
    options.refresh = () => {
      const e = resolveEndpoint(eo);
      // While the daemon is down its daemon.json may be gone: keep the last known URL.
      if (e.urlSource !== 'default') last = { url: e.url, token: e.token ?? last.token };
      return last;
    };
  }
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
