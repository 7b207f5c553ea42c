/**
 * A TCP proxy that adds a fixed delay each way, in its own process (the cluster_rtt bench):
 * what a PostgreSQL one network hop away looks like to a node. Every chunk read on either
 * side is written to the other side `delay` ms after it arrived, in order; nothing else
 * changes (no batching beyond what the kernel does, no bandwidth limit).
 *
 *   node dist/bench/lib/delay-proxy.js --to HOST:PORT --delay-ms MS
 *
 * prints `proxy listening on PORT` once it accepts connections; SIGTERM closes it.
 */
import { createServer, connect, type Socket } from 'node:net';

interface Args {
  host: string;
  port: number;
  delayMs: number;
}

function parseArgs(argv: string[]): Args {
  let to = '';
  let delayMs = NaN;
  for (let i = 0; i < argv.length; i++) {
    if (argv[i] === '--to') to = argv[++i] ?? '';
    else if (argv[i] === '--delay-ms') delayMs = Number(argv[++i]);
    else throw new Error(`unknown argument ${argv[i]}`);
  }
  const m = /^(.+):(\d+)$/.exec(to);
  if (!m || !Number.isFinite(delayMs) || delayMs < 0) throw new Error('usage: delay-proxy --to HOST:PORT --delay-ms MS');
  return { host: m[1]!, port: Number(m[2]), delayMs };
}

/**
 * One direction of a connection: chunks wait `delayMs` from their arrival, in order. One
 * timer per direction (armed for the oldest chunk), so a burst of chunks costs one timer.
 */
class DelayedPipe {
  private readonly queue: Array<{ due: number; data: Buffer }> = [];
  private head = 0;
  private timer: NodeJS.Timeout | null = null;
  private ended = false;

  constructor(
    private readonly to: Socket,
    private readonly delayMs: number,
  ) {}

  push(data: Buffer): void {
    if (this.delayMs === 0) {
      this.to.write(data);
      return;
    }
    this.queue.push({ due: performance.now() + this.delayMs, data });
    this.arm();
  }

  /** The source ended: end the destination once every queued chunk is written. */
  end(): void {
    this.ended = true;
    if (this.head >= this.queue.length) this.to.end();
  }

  private arm(): void {
    if (this.timer || this.head >= this.queue.length) return;
    const wait = Math.max(0, this.queue[this.head]!.due - performance.now());
    this.timer = setTimeout(() => this.flush(), wait);
  }

  private flush(): void {
    this.timer = null;
    const now = performance.now();
    while (this.head < this.queue.length && this.queue[this.head]!.due <= now + 0.05) {
      this.to.write(this.queue[this.head]!.data);
      this.head++;
    }
    if (this.head > 1024 && this.head * 2 > this.queue.length) {
      this.queue.splice(0, this.head);
      this.head = 0;
    }
    if (this.head >= this.queue.length && this.ended) this.to.end();
    else this.arm();
  }
}

function main(): void {
  const args = parseArgs(process.argv.slice(2));
  const sockets = new Set<Socket>();
  const server = createServer({ noDelay: true }, (client) => {
    const upstream = connect({ host: args.host, port: args.port, noDelay: true });
    sockets.add(client);
    sockets.add(upstream);
    const up = new DelayedPipe(upstream, args.delayMs);
    const down = new DelayedPipe(client, args.delayMs);
    client.on('data', (d) => up.push(d));
    upstream.on('data', (d) => down.push(d));
    client.on('end', () => up.end());
    upstream.on('end', () => down.end());
    const close = () => {
      client.destroy();
      upstream.destroy();
      sockets.delete(client);
      sockets.delete(upstream);
    };
    client.on('error', close);
    upstream.on('error', close);
    client.on('close', close);
    upstream.on('close', close);
  });
  server.listen(0, '127.0.0.1', () => {
    const { port } = server.address() as { port: number };
    process.stdout.write(`proxy listening on ${port}\n`);
  });
  process.on('SIGTERM', () => {
    server.close();
    for (const s of sockets) s.destroy();
    process.exit(0);
  });
}

main();
