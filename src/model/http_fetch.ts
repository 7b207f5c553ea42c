/**
 * A `fetch` for the model providers over `node:http`/`node:https` with keep-alive agents
 * of our own: no per-origin connection limit and up to `MAX_FREE_SOCKETS` idle connections
 * kept per origin, so the pool holds as many connections as there are concurrent model
 * calls and a finished call's connection serves the next one (no new TCP connection per
 * request under load). It does what the SDK needs of fetch: method, headers, a string
 * body, an AbortSignal, and a Response whose body streams the reply as it arrives.
 */
import { Agent as HttpAgent, request as httpRequest, type IncomingMessage } from 'node:http';
import { Agent as HttpsAgent, request as httpsRequest } from 'node:https';
import { Readable } from 'node:stream';

/** Idle connections kept per origin (beyond that, a finished call's socket is closed). */
const MAX_FREE_SOCKETS = 1024;

const agents = {
  http: new HttpAgent({ keepAlive: true, maxSockets: Infinity, maxFreeSockets: MAX_FREE_SOCKETS, scheduling: 'lifo' }),
  https: new HttpsAgent({ keepAlive: true, maxSockets: Infinity, maxFreeSockets: MAX_FREE_SOCKETS, scheduling: 'lifo' }),
};

function headersOf(init: RequestInit | undefined): Record<string, string> {
  const out: Record<string, string> = {};
  new Headers(init?.headers).forEach((value, name) => (out[name] = value));
  return out;
}

function responseHeaders(res: IncomingMessage): Headers {
  const headers = new Headers();
  for (let i = 0; i + 1 < res.rawHeaders.length; i += 2) headers.append(res.rawHeaders[i]!, res.rawHeaders[i + 1]!);
  return headers;
}

/** fetch(url, init) over node:http(s) with the pooled agents. */
export const httpFetch: typeof fetch = (input, init) => {
  const url = new URL(typeof input === 'string' ? input : input instanceof URL ? input.href : input.url);
  const https = url.protocol === 'https:';
  const signal = init?.signal ?? undefined;
  return new Promise<Response>((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason ?? new DOMException('aborted', 'AbortError'));
    const req = (https ? httpsRequest : httpRequest)(
      url,
      { method: init?.method ?? 'GET', headers: headersOf(init), agent: https ? agents.https : agents.http, ...(signal && { signal }) },
      (res) => {
        const status = res.statusCode ?? 500;
        const nullBody = status === 204 || status === 304 || init?.method === 'HEAD';
        if (nullBody) res.resume();
        const body = nullBody ? null : (Readable.toWeb(res) as ReadableStream<Uint8Array>);
        resolve(new Response(body, { status, statusText: res.statusMessage ?? '', headers: responseHeaders(res) }));
      },
    );
    req.on('error', reject);
    const body = init?.body;
    if (body === undefined || body === null) req.end();
    else if (typeof body === 'string' || body instanceof Uint8Array) req.end(body);
    else reject(new TypeError('httpFetch: only string and byte bodies are supported'));
  });
};
