/**
 * A local HTTP receiver for webhook tests: records every request (method, headers, raw
 * body) and answers with what the test says — a status, or never (a hanging receiver,
 * released by `release()` or at close).
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface Received {
  method: string;
  headers: IncomingMessage['headers'];
  body: string;
  at: number;
}

/** What to answer a request: a status, or `'hang'` (no answer until released). */
export type Answer = number | 'hang';

export interface Receiver {
  readonly url: string;
  readonly requests: Received[];
  /** Answers for the next requests, in order; after them, `fallback`. */
  answers: Answer[];
  fallback: Answer;
  /** Answer every hanging request 200. */
  release(): void;
  /** Resolves once `n` requests arrived. */
  waitFor(n: number, timeoutMs?: number): Promise<Received[]>;
  close(): Promise<void>;
}

export async function startReceiver(fallback: Answer = 200): Promise<Receiver> {
  const requests: Received[] = [];
  const hanging: ServerResponse[] = [];
  const waiters: Array<() => void> = [];
  const receiver: Receiver = {
    url: '',
    requests,
    answers: [],
    fallback,
    release: () => {
      for (const res of hanging.splice(0)) res.writeHead(200).end();
    },
    waitFor: (n, timeoutMs = 15_000) =>
      new Promise((resolve, reject) => {
        const check = () => {
          if (requests.length < n) return false;
          clearTimeout(timer);
          resolve(requests);
          return true;
        };
        const timer = setTimeout(() => reject(new Error(`the receiver got ${requests.length} of ${n} requests within ${timeoutMs} ms`)), timeoutMs);
        const w = () => {
          if (!check()) waiters.push(w);
        };
        w();
      }),
    close: () =>
      new Promise((resolve) => {
        receiver.release();
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      requests.push({ method: req.method ?? '', headers: req.headers, body: Buffer.concat(chunks).toString('utf8'), at: Date.now() });
      const answer = receiver.answers.shift() ?? receiver.fallback;
      if (answer === 'hang') hanging.push(res);
      else res.writeHead(answer).end();
      for (const w of waiters.splice(0)) w();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  (receiver as { url: string }).url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook?topic=t`;
  return receiver;
}
