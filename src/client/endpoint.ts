/**
 * Where the daemon is and how to authenticate: explicit options first, then the
 * environment, then the files `agentd serve` writes into its data dir (data-dir.ts).
 */
import { isProcessAlive, readDaemonInfo, readToken, resolveDataDir } from '../data-dir/data-dir.js';

export interface EndpointOptions {
  url?: string;
  token?: string;
  dataDir?: string;
}

export interface Endpoint {
  url: string;
  token: string | undefined;
  dataDir: string;
  /** Where the URL came from, for error messages. */
  urlSource: 'option' | 'env' | 'daemon.json' | 'default';
  /** For daemon.json: whether the recorded pid is alive. */
  daemonAlive?: boolean;
}

export const DEFAULT_URL = 'ws://127.0.0.1:7777';

/**
 * URL: --url, $AGENTD_URL, DATA_DIR/daemon.json, else ws://127.0.0.1:7777.
 * Token: --token, $AGENTD_TOKEN, DATA_DIR/token (none when the daemon runs --no-auth).
 * Read again before every reconnect, so a daemon restarted on another port is found.
 */
export function resolveEndpoint(options: EndpointOptions, env: NodeJS.ProcessEnv = process.env): Endpoint {
  const dataDir = resolveDataDir(options.dataDir, env);
  const info = readDaemonInfo(dataDir);
  let url: string;
  let urlSource: Endpoint['urlSource'];
  let daemonAlive: boolean | undefined;
  if (options.url) {
    url = options.url;
    urlSource = 'option';
  } else if (env.AGENTD_URL) {
    url = env.AGENTD_URL;
    urlSource = 'env';
  } else if (info) {
    url = info.url;
    urlSource = 'daemon.json';
    daemonAlive = isProcessAlive(info.pid);
  } else {
    url = DEFAULT_URL;
    urlSource = 'default';
  }
  let token = options.token || env.AGENTD_TOKEN || undefined;
  if (token === undefined && !(urlSource === 'daemon.json' && info?.auth === false)) {
    token = readToken(dataDir) ?? undefined;
  }
  const endpoint: Endpoint = { url, token, dataDir, urlSource };
  if (daemonAlive !== undefined) endpoint.daemonAlive = daemonAlive;
  return endpoint;
}

/** A hint to add to a connection failure. */
export function endpointHint(endpoint: Endpoint): string {
  switch (endpoint.urlSource) {
    case 'default':
      return `no daemon.json in ${endpoint.dataDir}; start the daemon with "agentd serve" or pass --url`;
    case 'daemon.json':
      return endpoint.daemonAlive === false
        ? `the daemon recorded in ${endpoint.dataDir}/daemon.json is not running; start it with "agentd serve"`
        : `URL from ${endpoint.dataDir}/daemon.json`;
    default:
      return '';
  }
}
