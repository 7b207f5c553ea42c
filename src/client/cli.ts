/**
 * Shared pieces of the client subcommands (attach, send, sessions): the connection
 * options, connecting with helpful errors, and exit codes.
 */
import { Option, type Command } from 'commander';
import { AgentdClient, type ClientOptions } from './client.js';
import { ServerError, describeError } from './errors.js';
import { endpointHint, resolveEndpoint, type Endpoint, type EndpointOptions } from './endpoint.js';

/** Exit codes of the client commands. */
export const EXIT = {
  ok: 0,
  /** The turn failed or was interrupted. */
  turnFailed: 1,
  /** Bad usage, cannot connect, unknown session, submission rejected. */
  usage: 2,
  /** Detached with Ctrl-C. */
  interrupted: 130,
} as const;

/** A failure that ends the command with a message and an exit code. */
export class CliExit extends Error {
  constructor(
    message: string,
    readonly exitCode: number = EXIT.usage,
  ) {
    super(message);
    this.name = 'CliExit';
  }
}

/** The CliExit for a failed attach to `sessionId`: an unknown session gets a hint. */
export function attachFailure(err: unknown, sessionId: string | undefined): CliExit {
  if (err instanceof CliExit) return err;
  if (err instanceof ServerError && err.code === 'unknown_session') {
    return new CliExit(`no session ${sessionId ?? ''} (list them with "agentd sessions")`);
  }
  return new CliExit(describeError(err));
}

export interface ConnectionFlags {
  url?: string;
  token?: string;
  dataDir?: string;
}

/** Add --url / --token / --data-dir to a subcommand; usage errors exit 2 (help/version 0). */
export function addConnectionOptions(cmd: Command): Command {
  return cmd
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
): Promise<{ client: AgentdClient; endpoint: Endpoint }> {
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
  return { client, endpoint };
}

/** Run a command body, mapping CliExit and other errors to a message and an exit code. */
export async function runCommand(name: string, body: () => Promise<number>): Promise<void> {
  let code: number;
  try {
    code = await body();
  } catch (err) {
    if (err instanceof CliExit) {
      if (err.message) process.stderr.write(`agentd ${name}: ${err.message}\n`);
      code = err.exitCode;
    } else {
      process.stderr.write(`agentd ${name}: ${describeError(err)}\n`);
      code = EXIT.usage;
    }
  }
  process.exitCode = code;
  // Exit even if a handle (a socket in teardown, stdin) would keep the loop alive.
  setTimeout(() => process.exit(code), 250).unref();
}
