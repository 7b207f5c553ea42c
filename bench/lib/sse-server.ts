/**
 * A fake OpenAI-compatible Chat Completions server for the many_sessions benchmark, in its
 * own process: every `POST /v1/chat/completions` streams a paced SSE reply, one chunk
 * every `--interval` ms (default 20: 50 chunks/s) per stream, each stream on its own
 * phase. The number of chunks is the last number in the last user message ("stream 100").
 * Each chunk's text is the wall-clock time it was written (`performance.timeOrigin +
 * now()`, ms) followed by `|`, so a client in another process measures the chunk's
 * latency end to end. `GET /stats` answers `{connections, requests, active}` (TCP
 * connections accepted, requests served, streams running).
 *
 *   node dist/bench/lib/sse-server.js [--interval MS]   → prints "sse listening on PORT"
 */
import { createServer, type ServerResponse } from 'node:http';

const intervalArg = process.argv.indexOf('--interval');
const INTERVAL_MS = intervalArg >= 0 ? Number(process.argv[intervalArg + 1]) : 20;

interface Stream {
  res: ServerResponse;
  left: number;
  next: number;
}

const streams = new Set<Stream>();
let connections = 0;
let requests = 0;

const chunk = (content: string) =>
  `data: {"id":"c1","object":"chat.completion.chunk","created":0,"model":"fake","choices":[{"index":0,"delta":{"content":"${content}"},"finish_reason":null}]}\n\n`;
const FINISH =
  'data: {"id":"c1","object":"chat.completion.chunk","created":0,"model":"fake","choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}\n\n' +
  'data: {"id":"c1","object":"chat.completion.chunk","created":0,"model":"fake","choices":[],"usage":{"prompt_tokens":10,"completion_tokens":10,"total_tokens":20}}\n\n' +
  'data: [DONE]\n\n';

function stamp(): string {
  return `${(performance.timeOrigin + performance.now()).toFixed(3)}|`;
}

function chunksWanted(body: string): number {
  try {
    const messages = (JSON.parse(body) as { messages: Array<{ role: string; content: unknown }> }).messages;
    const user = [...messages].reverse().find((m) => m.role === 'user');
    const m = /(\d+)\s*$/.exec(typeof user?.content === 'string' ? user.content : '');
    return m ? Math.min(100_000, Number(m[1])) : 10;
  } catch {
    return 10;
  }
}

const server = createServer((req, res) => {
  if (req.method === 'GET' && req.url === '/stats') {
    res.setHeader('content-type', 'application/json');
    res.end(JSON.stringify({ connections, requests, active: streams.size }));
    return;
  }
  let body = '';
  req.setEncoding('utf8');
  req.on('data', (d: string) => (body += d));
  req.on('end', () => {
    requests++;
    res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
    const s: Stream = { res, left: chunksWanted(body), next: performance.now() };
    streams.add(s);
    res.on('close', () => streams.delete(s));
  });
});
server.keepAliveTimeout = 60_000;
server.on('connection', () => connections++);

// One pacing loop for every stream; each stream writes when its own next time has come.
setInterval(() => {
  const t = performance.now();
  for (const s of streams) {
    if (t < s.next) continue;
    if (s.left > 0) {
      s.res.write(chunk(stamp()));
      s.left--;
      s.next += INTERVAL_MS;
      if (s.next < t) s.next = t + INTERVAL_MS;
    } else {
      streams.delete(s);
      s.res.end(FINISH);
    }
  }
}, 1);

server.listen(0, '127.0.0.1', () => {
  const address = server.address();
  process.stdout.write(`sse listening on ${typeof address === 'object' && address ? address.port : 0}\n`);
});
process.on('SIGTERM', () => process.exit(0));
