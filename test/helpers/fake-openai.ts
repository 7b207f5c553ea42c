/**
 * A real HTTP server (127.0.0.1, ephemeral port) speaking the streaming Chat Completions
 * SSE protocol, scripted per request. Used by the provider tests.
 */
import { createServer, type IncomingHttpHeaders, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface RecordedRequest {
  method: string;
  url: string;
  headers: IncomingHttpHeaders;
  body: any;
  /** The client's port: one per TCP connection (connection reuse shows as a repeated port). */
  remotePort: number;
}

/** Answers one request. */
export type Handler = (req: RecordedRequest, res: ServerResponse) => void | Promise<void>;

export interface FakeOpenAI {
  baseURL: string;
  requests: RecordedRequest[];
  /** Queues handlers for the next requests, in order (unscripted requests get a 500). */
  enqueue(...handlers: Handler[]): void;
  close(): Promise<void>;
}

export async function startFakeOpenAI(): Promise<FakeOpenAI> {
  const queue: Handler[] = [];
  const requests: RecordedRequest[] = [];
  const server = createServer(async (req, res) => {
    let raw = '';
    for await (const part of req) raw += part;
    const recorded: RecordedRequest = {
      method: req.method ?? '',
      url: req.url ?? '',
      headers: req.headers,
      body: raw ? JSON.parse(raw) : undefined,
      remotePort: req.socket.remotePort ?? 0,
    };
    requests.push(recorded);
    const handler = queue.shift() ?? status(500, { error: { message: 'no scripted response' } });
    await handler(recorded, res);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    baseURL: `http://127.0.0.1:${port}/v1`,
    requests,
    enqueue: (...handlers) => void queue.push(...handlers),
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Answers 200 with SSE headers (the stream's events follow). */
export function startSse(res: ServerResponse): void {
  res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache', connection: 'keep-alive' });
}

/** Streams `chunks` as SSE events, then `data: [DONE]`. */
export function sse(chunks: object[], opts: { delayMs?: number } = {}): Handler {
  return async (_req, res) => {
    startSse(res);
    for (const c of chunks) {
      res.write(`data: ${JSON.stringify(c)}\n\n`);
      if (opts.delayMs) await sleep(opts.delayMs);
    }
    res.end('data: [DONE]\n\n');
  };
}

/** Streams `chunks`, then keeps the response open (until the client goes away). */
export function sseThenHang(chunks: object[]): Handler {
  return (_req, res) => {
    startSse(res);
    for (const c of chunks) res.write(`data: ${JSON.stringify(c)}\n\n`);
  };
}

/** Streams `chunks`, then drops the connection without finishing. */
export function sseThenDrop(chunks: object[]): Handler {
  return async (_req, res) => {
    startSse(res);
    for (const c of chunks) res.write(`data: ${JSON.stringify(c)}\n\n`);
    await sleep(20);
    res.socket?.destroy();
  };
}

/** A plain JSON answer with an HTTP status. */
export function status(code: number, body: object, headers: Record<string, string> = {}): Handler {
  return (_req, res) => {
    res.writeHead(code, { 'content-type': 'application/json', ...headers });
    res.end(JSON.stringify(body));
  };
}

let n = 0;
const base = () => ({ id: `chatcmpl-${++n}`, object: 'chat.completion.chunk', created: 0, model: 'fake' });

export const chunk = {
  role: () => ({ ...base(), choices: [{ index: 0, delta: { role: 'assistant', content: '' }, finish_reason: null }] }),
  text: (content: string) => ({ ...base(), choices: [{ index: 0, delta: { content }, finish_reason: null }] }),
  tool: (index: number, f: { id?: string; name?: string; args?: string }) => ({
    ...base(),
    choices: [
      {
        index: 0,
        delta: {
          tool_calls: [
            {
              index,
              ...(f.id && { id: f.id, type: 'function' }),
              function: { ...(f.name !== undefined && { name: f.name }), ...(f.args !== undefined && { arguments: f.args }) },
            },
          ],
        },
        finish_reason: null,
      },
    ],
  }),
  finish: (reason: string) => ({ ...base(), choices: [{ index: 0, delta: {}, finish_reason: reason }] }),
  usage: (prompt: number, completion: number) => ({
    ...base(),
    choices: [],
    usage: { prompt_tokens: prompt, completion_tokens: completion, total_tokens: prompt + completion },
  }),
};
