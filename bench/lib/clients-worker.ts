/**
 * Worker thread hosting the WebSocket clients of the streaming scenarios, so they do not
 * share the server's event loop (they run on the other core). The same code receives
 * agentd's stream and the raw baseline's, so client cost is identical on both sides.
 *
 * workerData: StreamClientsConfig. Messages in: 'go'. Messages out: 'ready', result.
 */
import { parentPort, workerData } from 'node:worker_threads';
import WebSocket from 'ws';

export interface StreamClientsConfig {
  /** ws://HOST:PORT/v1 (agentd) or ws://HOST:PORT (raw). */
  url: string;
  clients: number;
  /** 'agentd': hello + attach, then client 0 submits a message. 'raw': client 0 sends "go". */
  mode: 'agentd' | 'raw';
  sessionId?: string;
  /** JSON.parse every batch and count its events (else only frames are counted). */
  parse: boolean;
}

export interface StreamClientsResult {
  type: 'result';
  /** Batch frames received, over all clients. */
  frames: number;
  /** Events received by client 0 (when parse is on). */
  events: number;
  bytes: number;
  /** From the go/submit frame to the last client seeing turn_complete. */
  ms: number;
  /** Per client, ms from go to its turn_complete. */
  perClientMs: number[];
}

const BATCH_PREFIX = Buffer.from('{"type":"batch"');
const END_MARK = '"type":"turn_complete"';

const cfg = workerData as StreamClientsConfig;
const port = parentPort!;

function toBuffer(data: WebSocket.RawData): Buffer {
  if (Buffer.isBuffer(data)) return data;
  if (Array.isArray(data)) return Buffer.concat(data);
  return Buffer.from(data);
}

async function connect(i: number): Promise<WebSocket> {
  const ws = new WebSocket(cfg.url, { perMessageDeflate: false, maxPayload: 1024 * 1024 * 1024 });
  await new Promise<void>((resolve, reject) => {
    ws.once('open', () => resolve());
    ws.once('error', reject);
  });
  if (cfg.mode === 'agentd') {
    const answers: string[] = [];
    const wait = (type: string) =>
      new Promise<void>((resolve, reject) => {
        const onMsg = (data: WebSocket.RawData) => {
          const f = JSON.parse(data.toString()) as { type: string };
          answers.push(f.type);
          if (f.type === type) {
            ws.off('message', onMsg);
            resolve();
          } else if (f.type === 'error') reject(new Error(`client ${i}: ${data.toString()}`));
        };
        ws.on('message', onMsg);
      });
    let w = wait('welcome');
    ws.send(JSON.stringify({ type: 'hello', protocol: 1, client: `bench-${i}` }));
    await w;
    w = wait('attached');
    ws.send(JSON.stringify({ type: 'attach', req_id: `a${i}`, session_id: cfg.sessionId, replay_batches: 0 }));
    await w;
  }
  return ws;
}

async function main(): Promise<void> {
  const sockets: WebSocket[] = [];
  for (let i = 0; i < cfg.clients; i++) sockets.push(await connect(i));
  let t0 = 0;
  let frames = 0;
  let events = 0;
  let bytes = 0;
  let done = 0;
  const perClientMs: number[] = new Array(cfg.clients).fill(NaN);
  sockets.forEach((ws, i) => {
    let finished = false;
    ws.on('message', (data) => {
      if (finished) return;
      const buf = toBuffer(data);
      if (buf.length < BATCH_PREFIX.length || buf.compare(BATCH_PREFIX, 0, BATCH_PREFIX.length, 0, BATCH_PREFIX.length) !== 0) return;
      frames++;
      bytes += buf.length;
      let end: boolean;
      if (cfg.parse) {
        const batch = JSON.parse(buf.toString()) as { events: Array<{ msg: { type: string } }> };
        if (i === 0) events += batch.events.length;
        end = batch.events.some((e) => e.msg.type === 'turn_complete');
      } else {
        end = buf.includes(END_MARK);
      }
      if (end) {
        finished = true;
        perClientMs[i] = performance.now() - t0;
        if (++done === cfg.clients) {
          const result: StreamClientsResult = { type: 'result', frames, events, bytes, ms: performance.now() - t0, perClientMs };
          port.postMessage(result);
          for (const s of sockets) s.terminate();
        }
      }
    });
  });
  port.on('message', (msg: unknown) => {
    if (msg !== 'go') return;
    t0 = performance.now();
    if (cfg.mode === 'agentd') {
      sockets[0]!.send(
        JSON.stringify({
          type: 'submit',
          session_id: cfg.sessionId,
          submission: { id: 'go-1', op: { type: 'message', text: 'stream please' } },
        }),
      );
    } else {
      sockets[0]!.send('go');
    }
  });
  port.postMessage({ type: 'ready' });
}

main().catch((err: unknown) => {
  port.postMessage({ type: 'error', message: (err as Error).stack ?? String(err) });
});
