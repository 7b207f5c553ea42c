/**
 * A raw ws echo server in its own process (the submit_latency baseline runs it the way
 * the daemon runs: a separate process on loopback). Prints `echo listening on PORT`.
 */
import { WebSocketServer } from 'ws';

const wss = new WebSocketServer({ host: '127.0.0.1', port: 0, perMessageDeflate: false });
wss.on('connection', (ws) => {
  ws.on('message', (data, isBinary) => ws.send(data, { binary: isBinary }));
});
wss.on('listening', () => {
  process.stdout.write(`echo listening on ${(wss.address() as { port: number }).port}\n`);
});
process.on('SIGTERM', () => {
  wss.close();
  process.exit(0);
});
