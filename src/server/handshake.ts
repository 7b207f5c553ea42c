/**
 * The first frame of a connection (protocol.md "Connecting"): it must be a valid `hello`
 * of a supported protocol version, from a client presenting the right token.
 */
import {
  CLOSE_PROTOCOL,
  CLOSE_UNAUTHORIZED,
  PROTOCOL_VERSION,
  parseClientFrame,
  type HandshakeErrorCode,
  type Hello,
} from '../../protocol/index.js';
import { authenticate, type UpgradeCredentials } from './auth.js';

export { CLOSE_PROTOCOL, CLOSE_UNAUTHORIZED };

/** The hello `client` of another node's link (src/cluster/peer.ts). */
export const PEER_CLIENT_PREFIX = 'agentd-node/';

/** Frames a node link may send: it forwards messages, nothing else. */
export const PEER_FRAMES: ReadonlySet<string> = new Set(['submit']);

export type HelloResult =
  | { ok: true; hello: Hello; peer: boolean }
  | { ok: false; code: HandshakeErrorCode; message: string; closeCode: number };

/**
 * Check the first frame. `text` is null for a binary frame. `token` null = auth disabled.
 * Order: shape (protocol error), then token (unauthorized), then version (protocol error).
 */
export function checkHello(text: string | null, token: string | null, creds: UpgradeCredentials, peerToken?: string): HelloResult {
  const protocolError = (message: string): HelloResult => ({ ok: false, code: 'protocol', message, closeCode: CLOSE_PROTOCOL });
  if (text === null) return protocolError('the first frame must be a JSON text hello frame');
  const parsed = parseClientFrame(text);
  if (!parsed.ok || parsed.frame.type !== 'hello') {
    const why = parsed.ok ? `got "${parsed.frame.type}"` : parsed.error.message;
    return protocolError(`the first frame must be hello (${why})`);
  }
  const hello = parsed.frame;
  let auth = authenticate(token, creds, hello.token);
  // Cluster mode: another node's link (client `agentd-node/ID`) authenticates with the
  // cluster secret instead; it is never a client token (a peer may only forward messages).
  let peer = false;
  if (!auth.ok && peerToken !== undefined && hello.client?.startsWith(PEER_CLIENT_PREFIX) && authenticate(peerToken, creds, hello.token).ok) {
    auth = { ok: true };
    peer = true;
  }
  if (!auth.ok) return { ok: false, code: 'unauthorized', message: auth.message, closeCode: CLOSE_UNAUTHORIZED };
  if (hello.protocol !== PROTOCOL_VERSION) {
    return protocolError(`unsupported protocol version ${hello.protocol}; this server speaks ${PROTOCOL_VERSION}`);
  }
  return { ok: true, hello, peer };
}
