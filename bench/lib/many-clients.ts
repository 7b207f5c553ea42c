/**
 * The clients of the many_sessions benchmark, in their own process (forked, IPC): one
 * WebSocket client per session, each creating and attaching its session, then submitting
 * `stream K` again and again — at once after each turn (streaming shape) or once per
 * period (mostly-idle shape). Every `agent_message_delta` carries the time the fake model
 * server wrote it; its latency is measured on arrival. The same code talks to agentd and
 * to the raw ceiling program (which answers the same few frames).
 *
 * IPC in: {cmd:'grow', url, n, cwd} · {cmd:'measure', ms} · {cmd:'stop'}.
 * IPC out: {type:'grown'} · {type:'window', edge:'start'|'end'} · {type:'measured', …} · {type:'stopped'}.
 */
import WebSocket from 'ws';

interface Load {
  /** Chunks per reply. */
  chunks: number;
  /** 0: submit again as soon as a turn ends; else one turn per period per session (staggered). */
  periodMs: number;
}

const DELTA = /"delta":"(\d+\.\d+)\|"/g;
const wall = () => performance.timeOrigin + performance.now();

let load: Load = { chunks: 100, periodMs: 0 };
let measuring = false;
let latencies: number[] = [];
let deltas = 0;
let turns = 0;
let failures = 0;
let stopping = false;
const clients: Client[] = [];

class Client {
  private ws!: WebSocket;
  private sessionId = '';
  private n = 0;
  private busy = false;
  private timer: NodeJS.Timeout | null = null;
  private readonly answers = new Map<string, (f: Record<string, unknown>) => void>();

  async open(url: string, cwd: string): Promise<void> {
    this.ws = new WebSocket(url, { perMessageDeflate: false, maxPayload: 64 * 1024 * 1024 });
    await new Promise<void>((resolve, reject) => {
      this.ws.once('open', () => resolve());
      this.ws.once('error', reject);
    });
    this.ws.on('message', (data) => this.onMessage(data.toString()));
    this.ws.send(JSON.stringify({ type: 'hello', protocol: 1, client: 'agentd-bench-many/1' }));
    await this.request({ type: 'create_session', config: { cwd, title: 'many' } }).then((f) => {
      this.sessionId = (f.session as { session_id: string }).session_id;
    });
    await this.request({ type: 'attach', session_id: this.sessionId, replay_batches: 0 });
  }

  /** Begin the load: the first turn at once (streaming) or at a random phase of the period. */
  start(): void {
    if (load.periodMs === 0) this.submit();
    else this.timer = setTimeout(() => this.tickPeriod(), Math.random() * load.periodMs);
  }

  stop(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
  }

  get idle(): boolean {
    return !this.busy;
  }

  close(): void {
    this.stop();
    this.ws.close();
  }

  private tickPeriod(): void {
    this.timer = setTimeout(() => this.tickPeriod(), load.periodMs);
    if (!this.busy) this.submit();
  }

  private submit(): void {
    if (stopping) return;
    this.busy = true;
    const id = `m${++this.n}`;
    this.ws.send(
      `{"type":"submit","session_id":"${this.sessionId}","submission":{"id":"${id}","op":{"type":"message","text":"stream ${load.chunks}"}}}`,
    );
  }

  private request(frame: Record<string, unknown>): Promise<Record<string, unknown>> {
    const req_id = `r${this.answers.size + 1}_${Math.random().toString(36).slice(2, 8)}`;
    return new Promise((resolve, reject) => {
      this.answers.set(req_id, (f) => (f.type === 'error' ? reject(new Error(`${String(frame.type)}: ${String(f.message)}`)) : resolve(f)));
      this.ws.send(JSON.stringify({ ...frame, req_id }));
    });
  }

  private onMessage(raw: string): void {
    if (raw.startsWith('{"type":"batch"')) {
      const at = wall();
      DELTA.lastIndex = 0;
      for (let m = DELTA.exec(raw); m; m = DELTA.exec(raw)) {
        if (measuring) {
          latencies.push(at - Number(m[1]));
          deltas++;
        }
      }
      const done = raw.includes('"type":"turn_complete"');
      if (done || raw.includes('"type":"turn_failed"')) {
        if (measuring) (done ? turns++ : failures++);
        this.busy = false;
        if (load.periodMs === 0) this.submit();
      }
      return;
    }
    const f = JSON.parse(raw) as Record<string, unknown>;
    const answer = typeof f.req_id === 'string' ? this.answers.get(f.req_id) : undefined;
    if (answer) {
      this.answers.delete(f.req_id as string);
      answer(f);
    } else if (f.type === 'error' && f.submission_id) {
      if (measuring) failures++;
      this.busy = false;
      if (load.periodMs === 0) setTimeout(() => this.submit(), 10);
    }
  }
}

function percentile(sorted: Float64Array, p: number): number {
  if (sorted.length === 0) return NaN;
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))]!;
}

const send = (msg: object) => process.send!(msg);

process.on('message', async (msg: { cmd: string; url?: string; n?: number; cwd?: string; ms?: number; load?: Load }) => {
  try {
    if (msg.cmd === 'grow') {
      if (msg.load) load = msg.load;
      stopping = false;
      const added: Client[] = [];
      // Connect in small waves: a burst of thousands of handshakes measures nothing useful.
      while (clients.length + added.length < msg.n!) {
        const wave = Math.min(50, msg.n! - clients.length - added.length);
        const opened = await Promise.all(Array.from({ length: wave }, async () => {
          const c = new Client();
          await c.open(msg.url!, msg.cwd!);
          return c;
        }));
        added.push(...opened);
      }
      clients.push(...added);
      for (const c of added) c.start();
      send({ type: 'grown' });
    } else if (msg.cmd === 'measure') {
      latencies = [];
      deltas = turns = failures = 0;
      measuring = true;
      send({ type: 'window', edge: 'start' });
      await new Promise((r) => setTimeout(r, msg.ms));
      measuring = false;
      send({ type: 'window', edge: 'end' });
      const sorted = Float64Array.from(latencies).sort();
      send({ type: 'measured', deltas, turns, failures, p50: percentile(sorted, 50), p99: percentile(sorted, 99), ms: msg.ms });
    } else if (msg.cmd === 'stop') {
      stopping = true;
      for (const c of clients) c.stop();
      const deadline = Date.now() + 15_000;
      while (clients.some((c) => !c.idle) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
      for (const c of clients) c.close();
      clients.length = 0;
      send({ type: 'stopped' });
    }
  } catch (err) {
    send({ type: 'error', message: (err as Error).message });
  }
});
