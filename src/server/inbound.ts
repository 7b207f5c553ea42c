/**
 * The receiving half of one client connection: turns the socket's messages into
 * received frames, and keeps what a client can make the daemon hold bounded.
 *
 * - Before authentication at most `preAuthMaxBytes` may arrive (counted on the raw
 *   socket, so a partial frame counts too); past that the socket is terminated.
 * - Text frames are checked for valid UTF-8 here (the server runs `ws` with
 *   `skipUTF8Validation`, so the client can be told with a typed error before the 1007
 *   close, which `ws` itself would send without one).
 * - While the outbox is full, frames are not handled: the socket is paused (TCP
 *   backpressure) and the few frames `ws` had already parsed wait in a queue until the
 *   outbox drains. So requests whose answers are big (`history`) queue behind the same
 *   high-water mark as batches.
 */
import { isUtf8 } from 'node:buffer';
import type { Duplex } from 'node:stream';
import type WebSocket from 'ws';
import type { Outbox } from './outbox.js';

export type ReceivedFrame =
  | { kind: 'text'; text: string }
  | { kind: 'binary' }
  /** A text frame whose payload is not valid UTF-8. */
  | { kind: 'invalid_utf8' };

export interface InboundOptions {
  /** Most bytes accepted on the socket before `authenticated()` is called. */
  preAuthMaxBytes: number;
  /** Handles one frame (called in arrival order, only while the outbox has room). */
  /** Handles one frame; a Promise while it awaits (the next frame waits for it). */
  onFrame: (frame: ReceivedFrame) => void | Promise<void>;
  /** More than preAuthMaxBytes arrived before authentication. */
  onPreAuthOverflow: (bytes: number) => void;
}

function toBuffer(data: WebSocket.RawData): Buffer {
  if (Buffer.isBuffer(data)) return data;
  if (Array.isArray(data)) return Buffer.concat(data);
  return Buffer.from(data);
}

/** Decode one message as `ws` delivers it. */
export function receivedFrame(data: WebSocket.RawData, isBinary: boolean): ReceivedFrame {
  if (isBinary) return { kind: 'binary' };
  const buf = toBuffer(data);
  if (!isUtf8(buf)) return { kind: 'invalid_utf8' };
  return { kind: 'text', text: buf.toString('utf8') };
}

export class Inbound {
  private readonly queue: ReceivedFrame[] = [];
  private paused = false;
  private stopped = false;
  /** A handler of this connection is awaiting (the journal): later frames wait. */
  private busy = false;
  private preAuthBytes = 0;
  private readonly countPreAuth = (chunk: Buffer): void => {
    this.preAuthBytes += chunk.length;
    if (this.preAuthBytes > this.options.preAuthMaxBytes) {
      this.socket.off('data', this.countPreAuth);
      this.options.onPreAuthOverflow(this.preAuthBytes);
    }
  };

  constructor(
    private readonly ws: WebSocket,
    private readonly socket: Duplex,
    private readonly outbox: Outbox,
    private readonly options: InboundOptions,
  ) {
    socket.on('data', this.countPreAuth);
    ws.on('message', (data, isBinary) => this.onMessage(receivedFrame(data, isBinary)));
  }

  /** The client authenticated: the pre-auth byte limit no longer applies. */
  authenticated(): void {
    this.socket.off('data', this.countPreAuth);
  }

  /** Frames received but not handled yet (waiting for the outbox to drain). */
  get queued(): number {
    return this.queue.length;
  }

  /** Handle nothing more; resume the socket so that the peer's close frame can be read. */
  stop(): void {
    this.stopped = true;
    this.queue.length = 0;
    this.socket.off('data', this.countPreAuth);
    this.outbox.cancel(this);
    if (this.paused) {
      this.paused = false;
      this.ws.resume();
    }
  }

  private onMessage(frame: ReceivedFrame): void {
    if (this.stopped) return;
    if (this.queue.length > 0 || this.outbox.isFull || this.busy) {
      this.queue.push(frame);
      this.hold();
      return;
    }
    this.run(frame);
  }

  /**
   * Hand one frame over. A handler that awaits (the journal) keeps the connection busy: the
   * frames after it wait here, the socket paused, so a client that sends requests without
   * reading their answers is held by the same bound as one whose answers fill the outbox.
   */
  private run(frame: ReceivedFrame): void {
    const pending = this.options.onFrame(frame);
    if (!(pending instanceof Promise)) return;
    this.busy = true;
    void pending.finally(() => {
      this.busy = false;
      this.release();
    });
  }

  /** Stop reading the socket until the outbox drains (or the busy handler settles). */
  private hold(): void {
    if (!this.paused) {
      this.paused = true;
      this.ws.pause();
    }
    if (this.outbox.isFull) this.outbox.whenDrained(this, () => this.release());
  }

  /** The outbox drained or a handler settled: handle queued frames while there is room, then read again. */
  private release(): void {
    while (!this.stopped && this.queue.length > 0) {
      if (this.busy) return;
      if (this.outbox.isFull) {
        this.hold();
        return;
      }
      this.run(this.queue.shift()!);
    }
    if (this.stopped || !this.paused) return;
    this.paused = false;
    this.ws.resume();
  }
}
