/**
 * Where the daemon is and how to authenticate: explicit options first, then the
 * environment, then the files `agentd serve` writes into its data dir.
 */
import { readFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { join, resolve } from 'node:path';

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
}

export const DEFAULT_URL = 'ws://127.0.0.1:7777';

/** `--data-dir`, else `$AGENTD_HOME`, else `~/.local/share/agentd`. */
export function resolveDataDir(dataDir?: string, env: NodeJS.ProcessEnv = process.env): string {
  if (dataDir) return resolve(dataDir);
  if (env.AGENTD_HOME) return resolve(env.AGENTD_HOME);
  return join(homedir(), '.local', 'share', 'agentd');
}

function readText(path: string): string | undefined {
  try {
    return readFileSync(path, 'utf8');
  } catch {
    return undefined;
  }
}

/** The daemon's `daemon.json` ({url, pid}) if present and readable. */
export function readDaemonInfo(dataDir: string): { url?: string; pid?: number } | undefined {
  const text = readText(join(dataDir, 'daemon.json'));
  if (!text) return undefined;
  try {
    const v = JSON.parse(text) as { url?: unknown; pid?: unknown };
    const info: { url?: string; pid?: number } = {};
    if (typeof v.url === 'string') info.url = v.url;
    if (typeof v.pid === 'number') info.pid = v.pid;
    return info;
  } catch {
    return undefined;
  }
}

export function resolveEndpoint(options: EndpointOptions, env: NodeJS.ProcessEnv = process.env): Endpoint {
  const dataDir = resolveDataDir(options.dataDir, env);
  let url: string;
  let urlSource: Endpoint['urlSource'];
  if (options.url) {
    url = options.url;
    urlSource = 'option';
  } else if (env.AGENTD_URL) {
    url = env.AGENTD_URL;
    urlSource = 'env';
  } else {
    const info = readDaemonInfo(dataDir);
    if (info?.url) {
      url = info.url;
      urlSource = 'daemon.json';
    } else {
      url = DEFAULT_URL;
      urlSource = 'default';
    }
  }
  const token = options.token ?? env.AGENTD_TOKEN ?? readText(join(dataDir, 'token'))?.trim() ?? undefined;
  return { url, token: token || undefined, dataDir, urlSource };
}
