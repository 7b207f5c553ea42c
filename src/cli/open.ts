/**
 * `agentd open [SESSION_ID]`: print the web UI's URL with the token in the fragment
 * (`http://HOST:PORT/#token=T[&session=ID]`, docs/web.md) and, on a desktop, open it
 * in the browser. The fragment never reaches the server; the page moves the token into
 * sessionStorage and sends it only in its `hello` frame.
 *
 * Exit codes: 0 printed (and opened, or tried to), 2 no daemon / bad usage.
 */
import { spawn } from 'node:child_process';
import { Command } from 'commander';
import { addConnectionOptions, givenUrls, type ConnectionFlags } from './connect.js';
import { CliExit, EXIT, runCliCommand } from './exit.js';
import { endpointHint, resolveEndpoint } from '../client/endpoint.js';
import { packageVersion } from './version.js';

interface OpenFlags extends ConnectionFlags {
  browser: boolean;
}

export function registerOpen(program: Command): void {
  const cmd = new Command('open')
    .description('print the web UI URL (with the token in its #fragment) and open it in a browser on a desktop')
    .argument('[session_id]', 'open this session directly')
    .option('--no-browser', 'only print the URL')
    .version(packageVersion(), '-V, --version', 'print the version');
  addConnectionOptions(cmd);
  cmd.action((sessionId: string | undefined, flags: OpenFlags) => runCliCommand('open', () => open(sessionId, flags)));
  program.addCommand(cmd);
}

/** `ws://HOST:PORT[/v1]` → `http://HOST:PORT/`; a wildcard bind address becomes localhost. */
export function webUrl(wsUrl: string): string {
  const u = new URL(wsUrl);
  u.protocol = u.protocol === 'wss:' ? 'https:' : 'http:';
  if (u.hostname === '0.0.0.0' || u.hostname === '[::]') u.hostname = 'localhost';
  u.pathname = '/';
  u.search = '';
  u.hash = '';
  return u.toString();
}

/** The page URL with `#token=…&session=…` (either may be absent). */
export function openUrl(wsUrl: string, token: string | undefined, sessionId: string | undefined): string {
  const params = new URLSearchParams();
  if (token) params.set('token', token);
  if (sessionId) params.set('session', sessionId);
  const frag = params.toString();
  return `${webUrl(wsUrl)}${frag ? `#${frag}` : ''}`;
}

/** The command that opens a URL on this desktop, or null on a headless machine. */
export function browserCommand(env: NodeJS.ProcessEnv = process.env, platform = process.platform): string[] | null {
  if (env.BROWSER) return [env.BROWSER];
  if (platform === 'darwin') return ['open'];
  // `start` through cmd: the URL is quoted (see open()) so cmd does not split it at `&`.
  if (platform === 'win32') return ['cmd', '/c', 'start', '""'];
  if (env.DISPLAY || env.WAYLAND_DISPLAY) return ['xdg-open'];
  return null;
}

async function open(sessionId: string | undefined, flags: OpenFlags): Promise<number> {
  const url0 = givenUrls(flags)[0];
  const endpoint = resolveEndpoint({
    ...(url0 !== undefined && { url: url0 }),
    ...(flags.token && { token: flags.token }),
    ...(flags.dataDir && { dataDir: flags.dataDir }),
  });
  if (endpoint.urlSource === 'default' || endpoint.daemonAlive === false) {
    throw new CliExit(`no running daemon found (${endpointHint(endpoint)})`, EXIT.usage);
  }
  let url: string;
  try {
    url = openUrl(endpoint.url, endpoint.token, sessionId);
  } catch {
    throw new CliExit(`not a daemon URL: ${endpoint.url}`, EXIT.usage);
  }
  process.stdout.write(`${url}\n`);
  const cmd = flags.browser ? browserCommand() : null;
  if (cmd) {
    const [bin, ...args] = cmd;
    const win = process.platform === 'win32' && !process.env.BROWSER;
    const child = spawn(bin!, [...args, win ? `"${url}"` : url], { stdio: 'ignore', detached: true, windowsVerbatimArguments: win });
    child.on('error', (err) => process.stderr.write(`agentd open: could not start ${bin}: ${err.message}\n`));
    child.unref();
  }
  return EXIT.ok;
}
