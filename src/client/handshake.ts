/**
 * Opening a socket to the daemon: the URL, the bearer token, and the hello/welcome
 * handshake, with failures turned into ConnectionErrors that say whether retrying can help.
 */
import WebSocket from 'ws';
import { CLOSE_PROTOCOL, CLOSE_UNAUTHORIZED, HandshakeErrorCodeSchema, LIMITS, PROTOCOL_VERSION, type Hello, type Welcome } from '../../protocol/index.js';
import { ConnectionError } from './errors.js';
import { parseServerFrameLenient } from './frames.js';

/** The client's default frame limit: twice the spec's (a margin over what a conforming daemon sends). */
export const DEFAULT_MAX_FRAME_BYTES = LIMITS.frameMaxBytes * 2;

export interface HandshakeOptions {
  /** `ws://host:port` or `ws://host:port/v1`; http(s) URLs are accepted too. */
  url: string;
  token?: string;
  /** Sent in `hello` as `client`, e.g. `agentd-tui/0.1.0`. */
  clientName?: string;
  /** Give up connecting (socket + welcome) after this long. Default 5000. */
  connectTimeoutMs?: number;
  /**
   * The largest server frame taken, in bytes (default DEFAULT_MAX_FRAME_BYTES). A larger
   * frame ends the connection with an UnreadableFrameError.
   */
  maxFrameBytes?: number;
}

/** Normalise a daemon URL: http→ws, and the `/v1` path when none is given. */
export function normalizeUrl(raw: string): string {
  let text = raw.trim();
  if (!/^[a-z]+:\/\//i.test(text)) text = `ws://${text}`;
  const url = new URL(text);
  if (url.protocol === 'http:') url.protocol = 'ws:';
  if (url.protocol === 'https:') url.protocol = 'wss:';
  if (url.pathname === '' || url.pathname === '/') url.pathname = '/v1';
  return url.toString();
}

function describeSocketError(url: string, err: Error & { code?: string }): string {
  if (err.code === 'ECONNREFUSED') return `cannot connect to ${url}: connection refused (is \`agentd serve\` running?)`;
  if (err.code === 'ENOTFOUND') return `cannot connect to ${url}: host not found`;
  return `cannot connect to ${url}: ${err.message}`;
}

/**
 * Open a socket, say hello and wait for welcome. On welcome the handshake's listeners
 * are removed and `onWelcome` runs at once (so it can wire the socket before any later
 * frame is read); its result resolves the promise.
 */
export function handshake<T>(
  options: HandshakeOptions,
  onWelcome: (ws: WebSocket, url: string, welcome: Welcome) => T,
): Promise<T> {
  const url = normalizeUrl(options.url);
  const headers: Record<string, string> = {};
  if (options.token) headers.authorization = `Bearer ${options.token}`;
  const timeoutMs = options.connectTimeoutMs ?? 5000;
  const maxPayload = options.maxFrameBytes ?? DEFAULT_MAX_FRAME_BYTES;
  const ws = new WebSocket(url, { headers, maxPayload, handshakeTimeout: timeoutMs });

  return new Promise<T>((resolve, reject) => {
    let welcomed = false;
    const fail = (err: ConnectionError) => {
      if (welcomed) return;
      welcomed = true;
      clearTimeout(timer);
      ws.removeAllListeners();
      ws.on('error', () => {});
      ws.terminate();
      reject(err);
    };
    const timer = setTimeout(() => fail(new ConnectionError(`timed out connecting to ${url}`)), timeoutMs);

    ws.on('unexpected-response', (_req, res) => {
      const status = res.statusCode ?? 0;
      if (status === 401 || status === 403) {
        fail(new ConnectionError(`unauthorized: the daemon rejected the token (HTTP ${status})`, false));
      } else {
        fail(new ConnectionError(`cannot connect to ${url}: HTTP ${status}`, status >= 500));
      }
    });
    ws.on('error', (err) => fail(new ConnectionError(describeSocketError(url, err))));
    ws.on('close', (code, reason) => {
      const r = reason.toString();
      if (code === CLOSE_UNAUTHORIZED) fail(new ConnectionError(`unauthorized${r ? `: ${r}` : ''}`, false, code));
      else if (code === CLOSE_PROTOCOL) fail(new ConnectionError(`protocol error${r ? `: ${r}` : ''}`, false, code));
      else fail(new ConnectionError(`connection to ${url} closed during handshake (${code})`, true, code));
    });
    ws.on('open', () => {
      const hello: Hello = { type: 'hello', protocol: PROTOCOL_VERSION };
      if (options.clientName) hello.client = options.clientName;
      if (options.token) hello.token = options.token;
      ws.send(JSON.stringify(hello));
    });
    ws.once('message', (data) => {
      const { frame } = parseServerFrameLenient(data.toString());
      if (frame?.type === 'welcome') {
        if (frame.protocol !== PROTOCOL_VERSION) {
          fail(new ConnectionError(`server speaks protocol ${frame.protocol}, this client ${PROTOCOL_VERSION}`, false));
          return;
        }
        welcomed = true;
        clearTimeout(timer);
        ws.removeAllListeners();
        resolve(onWelcome(ws, url, frame));
      } else if (frame?.type === 'error') {
        const retryable = !HandshakeErrorCodeSchema.safeParse(frame.code).success;
        fail(new ConnectionError(`${frame.code}: ${frame.message}`, retryable));
      } else {
        fail(new ConnectionError(`unexpected first frame from server: ${data.toString().slice(0, 200)}`, false));
      }
    });
  });
}
