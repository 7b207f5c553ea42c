/**
 * A minimal protocol v1 client for the benchmarks (no library in between): frames are
 * parsed with JSON.parse and handed to waiters in arrival order.
 */
import WebSocket from 'ws';

export type Frame = { type: string; [k: string]: unknown };

export class Wire {
  private waiters: Array<{ pred: (f: Frame) => boolean; resolve: (f: Frame) => void }> = [];
  private nextReq = 1;
  /** Called for every frame before waiters are checked. */
  onFrame: ((f: Frame, raw: string) => void) | null = null;

  private constructor(readonly ws: WebSocket) {
    ws.on('message', (data) => {
      const raw = data.toString();
      const frame = JSON.parse(raw) as Frame;
      this.onFrame?.(frame, raw);
      if (this.waiters.length === 0) return;
      const keep: typeof this.waiters = [];
      for (const w of this.waiters) {
        if (w.pred(frame)) w.resolve(frame);
        else keep.push(w);
      }
      this.waiters = keep;
    });
  }

  /** Connect to `ws://HOST:PORT` (the /v1 path is added) and say hello. */
  static async connect(url: string, token: string | null = null): Promise<Wire> {
    const ws = new WebSocket(`${url}/v1`, { perMessageDeflate: false, maxPayload: 256 * 1024 * 1024 });
    await new Promise<void>((resolve, reject) => {
      ws.once('open', () => resolve());
      ws.once('error', reject);
    });
    const wire = new Wire(ws);
    const welcome = wire.next((f) => f.type === 'welcome' || f.type === 'error');
    wire.send({ type: 'hello', protocol: 1, client: 'agentd-bench/1', ...(token && { token }) });
    const f = await welcome;
    if (f.type !== 'welcome') throw new Error(`hello refused: ${JSON.stringify(f)}`);
    return wire;
  }

  send(frame: object | string): void {
    this.ws.send(typeof frame === 'string' ? frame : JSON.stringify(frame));
  }

  /** The next frame matching `pred` (registered now, so call before sending). */
  next(pred: (f: Frame) => boolean): Promise<Frame> {
    return new Promise((resolve) => this.waiters.push({ pred, resolve }));
  }

  /** Send a request frame and wait for the answer with the same req_id. */
  async request(frame: Record<string, unknown>): Promise<Frame> {
    const req_id = `r${this.nextReq++}`;
    const answer = this.next((f) => f.req_id === req_id);
    this.send({ ...frame, req_id });
    const f = await answer;
    if (f.type === 'error') throw new Error(`${String(frame.type)} failed: ${String(f.code)}: ${String(f.message)}`);
    return f;
  }

  async createSession(config: Record<string, unknown> = {}): Promise<string> {
    const f = await this.request({ type: 'create_session', config });
    return (f.session as { session_id: string }).session_id;
  }

  close(): Promise<void> {
    return new Promise((resolve) => {
      if (this.ws.readyState === WebSocket.CLOSED) return resolve();
      this.ws.once('close', () => resolve());
      this.ws.close();
    });
  }
}
