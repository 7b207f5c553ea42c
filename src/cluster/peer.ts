/**
 * Node-to-node links (docs/cluster.md): a submission for a session another node owns is
 * forwarded to that node over a WebSocket speaking the ordinary client protocol,
 * authenticated with the cluster secret (not the client token). The owner answers with
 * the frames a client would get — `queued`, then for a message `admitted` or an `error` —
 * and they are handed back to the forwarding node's client as they are. One link per
 * peer URL, opened on first use, replaced when it closes.
 */
import WebSocket from 'ws';
import {
  PROTOCOL_VERSION,
  parseServerFrame,
  type AdmissionOutcome,
  type ErrorCode,
  type Submission,
} from '../../protocol/index.js';
import type { SubmitAnswer } from '../session/api.js';

/** The link to the owner broke (or never opened): the caller may look the owner up again and retry. */
export class PeerUnavailableError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'PeerUnavailableError';
  }
}

/** What becomes of a forwarded submission after it was queued. */
export interface ForwardCallbacks {
  onAdmitted(outcome: AdmissionOutcome): void;
  onRejected(message: string, code?: 'busy' | 'internal'): void;
  /** The link broke after `queued` and before the answer: the outcome is not known here. */
  onLost(): void;
}

interface Pending extends ForwardCallbacks {
  sessionId: string;
  /** Before `queued`: settles the forward's promise. */
  queued: ((result: SubmitAnswer) => void) | null;
  failed: (err: Error) => void;
  message: boolean;
}

const OPEN_TIMEOUT_MS = 3000;
const REFUSED_PREFIX = 'message not admitted: ';

class PeerLink {
  private readonly ws: WebSocket;
  private readonly ready: Promise<void>;
  private readonly pending = new Map<string, Pending>();
  closed = false;

  constructor(url: string, secret: string, nodeId: string) {
    this.ws = new WebSocket(`${url.replace(/\/+$/, '')}/v1`, {
      headers: { authorization: `Bearer ${secret}` },
      handshakeTimeout: OPEN_TIMEOUT_MS,
      maxPayload: 64 * 1024 * 1024,
    });
    this.ready = new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => reject(new PeerUnavailableError(`no welcome from ${url} within ${OPEN_TIMEOUT_MS} ms`)), OPEN_TIMEOUT_MS);
      this.ws.once('open', () => this.ws.send(JSON.stringify({ type: 'hello', protocol: PROTOCOL_VERSION, client: `agentd-node/${nodeId}` })));
      this.ws.on('message', (data, binary) => {
        if (binary) return;
        let frame;
        try {
          frame = parseServerFrame(data.toString());
        } catch {
          return;
        }
        if (frame.type === 'welcome') {
          clearTimeout(timer);
          resolve();
        } else if (frame.type === 'error' && frame.submission_id === undefined && frame.req_id === undefined) {
          clearTimeout(timer);
          reject(new PeerUnavailableError(`${url} refused the link: ${frame.message}`));
        } else {
          this.answer(frame);
        }
      });
      const down = (why: string): void => {
        clearTimeout(timer);
        reject(new PeerUnavailableError(`link to ${url}: ${why}`));
        this.lost();
      };
      this.ws.on('error', (err) => down(err.message));
      this.ws.on('close', () => down('closed'));
    });
    this.ready.catch(() => undefined);
  }

  async forward(sessionId: string, submission: Submission, callbacks: ForwardCallbacks): Promise<SubmitAnswer> {
    await this.ready;
    if (this.closed || this.ws.readyState !== WebSocket.OPEN) throw new PeerUnavailableError('the link closed');
    if (this.pending.has(submission.id)) throw new PeerUnavailableError(`submission ${submission.id} is already on its way`);
    return new Promise<SubmitAnswer>((resolve, reject) => {
      this.pending.set(submission.id, {
        ...callbacks,
        sessionId,
        queued: resolve,
        failed: reject,
        message: submission.op.type === 'message',
      });
      this.ws.send(JSON.stringify({ type: 'submit', session_id: sessionId, submission }));
    });
  }

  private answer(frame: ReturnType<typeof parseServerFrame>): void {
    if (frame.type === 'queued') {
      const p = this.pending.get(frame.submission_id);
      if (!p?.queued) return;
      p.queued({ ok: true, ingress_seq: frame.ingress_seq });
      p.queued = null;
      if (!p.message) this.pending.delete(frame.submission_id);
    } else if (frame.type === 'admitted') {
      const p = this.pending.get(frame.submission_id);
      if (!p) return;
      this.pending.delete(frame.submission_id);
      p.onAdmitted(frame.outcome);
    } else if (frame.type === 'error' && frame.submission_id !== undefined) {
      const p = this.pending.get(frame.submission_id);
      if (!p) return;
      this.pending.delete(frame.submission_id);
      if (p.queued) {
        p.queued(refusal(frame.code, frame.message));
      } else {
        const message = frame.message.startsWith(REFUSED_PREFIX) ? frame.message.slice(REFUSED_PREFIX.length) : frame.message;
        p.onRejected(message, frame.code === 'busy' ? 'busy' : 'internal');
      }
    }
  }

  private lost(): void {
    if (this.closed) return;
    this.closed = true;
    const pending = [...this.pending.values()];
    this.pending.clear();
    for (const p of pending) {
      if (p.queued) p.failed(new PeerUnavailableError('the link to the owner closed before it answered'));
      else p.onLost();
    }
  }

  close(): void {
    this.ws.terminate();
    this.lost();
  }
}

/** An `error` frame from the owner before `queued`: the refusal this node's client gets, code and all. */
function refusal(code: ErrorCode, message: string): SubmitAnswer {
  return { ok: false, code, message };
}

export class PeerLinks {
  private readonly links = new Map<string, PeerLink>();

  constructor(
    private readonly secret: string,
    private readonly nodeId: string,
  ) {}

  /** Forward a submission to the node at `url`; rejects with PeerUnavailableError when the link cannot carry it. */
  forward(url: string, sessionId: string, submission: Submission, callbacks: ForwardCallbacks): Promise<SubmitAnswer> {
    let link = this.links.get(url);
    if (!link || link.closed) {
      link = new PeerLink(url, this.secret, this.nodeId);
      this.links.set(url, link);
    }
    return link.forward(sessionId, submission, callbacks);
  }

  close(): void {
    for (const link of this.links.values()) link.close();
    this.links.clear();
  }
}
