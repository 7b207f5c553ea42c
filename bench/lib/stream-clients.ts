/** Runs clients-worker.ts in a worker thread: connect N clients, then time one stream. */
import { Worker } from 'node:worker_threads';
import type { StreamClientsConfig, StreamClientsResult } from './clients-worker.js';
import { withTimeout } from './util.js';

export interface StreamClients {
  /** Trigger the stream (client 0 submits / sends go); resolves when every client saw the end. */
  go(timeoutMs?: number): Promise<StreamClientsResult>;
  close(): Promise<void>;
}

export async function startStreamClients(cfg: StreamClientsConfig): Promise<StreamClients> {
  const worker = new Worker(new URL('./clients-worker.js', import.meta.url), { workerData: cfg });
  let onResult: ((r: StreamClientsResult) => void) | null = null;
  let onError: ((e: Error) => void) | null = null;
  const ready = new Promise<void>((resolve, reject) => {
    onError = reject;
    worker.on('message', (msg: { type: string; message?: string }) => {
      if (msg.type === 'ready') resolve();
      else if (msg.type === 'result') onResult?.(msg as StreamClientsResult);
      else if (msg.type === 'error') onError?.(new Error(`stream clients: ${msg.message}`));
    });
    worker.on('error', (err) => onError?.(err));
  });
  await withTimeout(ready, 60_000, `connecting ${cfg.clients} clients`);
  return {
    go(timeoutMs = 120_000) {
      const result = new Promise<StreamClientsResult>((resolve, reject) => {
        onResult = resolve;
        onError = reject;
      });
      worker.postMessage('go');
      return withTimeout(result, timeoutMs, 'stream to finish');
    },
    async close() {
      await worker.terminate();
    },
  };
}
