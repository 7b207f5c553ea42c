/**
 * The notification webhook (docs/sessions.md#notifications): a session observer that
 * turns committed events into notifications and POSTs them from a bounded queue, one at a
 * time in order, retrying a failed POST with backoff. It never delays a session: seeing a
 * batch costs a regex test and, for a wanted event, a queue push; a full queue drops its
 * oldest notification (counted and logged).
 */
import type { NotifyConfig, NotifyEvent } from '../config/config.js';
import type { CommittedBatch } from '../journal/journal.js';
import type { SessionObserver } from '../session/observer.js';
import { encodeNotification, payloadOf, type NotificationPayload, type SessionFacts } from './payload.js';

/** What the notifier logs through (pino's shape). */
export interface NotifyLog {
  warn(fields: Record<string, unknown>, message: string): void;
  debug(fields: Record<string, unknown>, message: string): void;
}

export interface NotifierOptions {
  config: NotifyConfig;
  log: NotifyLog;
  env?: NodeJS.ProcessEnv;
  /** Notifications waiting at most (default NOTIFY_QUEUE_CAPACITY). */
  capacity?: number;
  /** Attempts of one notification (default NOTIFY_MAX_ATTEMPTS). */
  maxAttempts?: number;
  /** The first retry's wait, doubled per retry (default NOTIFY_FIRST_RETRY_MS). */
  firstRetryMs?: number;
  /** One POST's deadline (default NOTIFY_TIMEOUT_MS). */
  timeoutMs?: number;
}

export const NOTIFY_QUEUE_CAPACITY = 256;
export const NOTIFY_MAX_ATTEMPTS = 5;
export const NOTIFY_FIRST_RETRY_MS = 1000;
export const NOTIFY_MAX_RETRY_MS = 30_000;
export const NOTIFY_TIMEOUT_MS = 10_000;
/** A full queue's drops are logged at most this often. */
const DROP_LOG_INTERVAL_MS = 60_000;

/** A frame holding an event that may notify (every other batch is skipped unparsed). */
const WANTED = /"type":"(?:exec_approval_request|turn_complete|turn_failed)"/;

/** Statuses worth another attempt (besides network failures and timeouts). */
const retryable = (status: number) => status >= 500 || status === 408 || status === 429;

export class Notifier implements SessionObserver {
  /** The facts of a session (its title, its parent), set once the host exists. */
  describe: (sessionId: string) => SessionFacts | undefined = () => undefined;
  /** The web UI's address (`http://HOST:PORT`), set once the daemon listens. */
  webUrl: string | null = null;
  /** Notifications dropped because the queue was full, since start. */
  dropped = 0;
  /** Notifications delivered (a 2xx answer), since start. */
  delivered = 0;
  /** Notifications given up on after their last attempt or a refusal, since start. */
  failed = 0;

  private readonly wanted: ReadonlySet<NotifyEvent>;
  private readonly queue: NotificationPayload[] = [];
  private readonly capacity: number;
  private readonly maxAttempts: number;
  private readonly firstRetryMs: number;
  private readonly timeoutMs: number;
  private readonly secret: string | undefined;
  private sending = false;
  private closed = false;
  private readonly inFlight = new AbortController();
  private retryTimer: NodeJS.Timeout | null = null;
  private wake: (() => void) | null = null;
  private droppedSinceLog = 0;
  private lastDropLog = -Infinity;

  constructor(private readonly options: NotifierOptions) {
    this.wanted = new Set(options.config.events);
    this.capacity = options.capacity ?? NOTIFY_QUEUE_CAPACITY;
    this.maxAttempts = options.maxAttempts ?? NOTIFY_MAX_ATTEMPTS;
    this.firstRetryMs = options.firstRetryMs ?? NOTIFY_FIRST_RETRY_MS;
    this.timeoutMs = options.timeoutMs ?? NOTIFY_TIMEOUT_MS;
    const name = options.config.secret_env;
    this.secret = name === undefined ? undefined : (options.env ?? process.env)[name] || undefined;
    if (name !== undefined && this.secret === undefined) options.log.warn({ secret_env: name }, 'notify.secret_env names an unset or empty variable: notifications are sent unsigned');
  }

  /** Notifications waiting (the one being sent included). */
  get pending(): number {
    return this.queue.length;
  }

  committed(batch: CommittedBatch): void {
    if (this.closed || !WANTED.test(batch.frame)) return;
    try {
      let facts: SessionFacts | undefined;
      for (const event of batch.events) {
        if (event.msg.type !== 'exec_approval_request' && event.msg.type !== 'turn_complete' && event.msg.type !== 'turn_failed') continue;
        facts ??= this.describe(batch.session_id) ?? { title: null, parent_session_id: null };
        const payload = payloadOf(batch.session_id, event, facts, this.wanted, this.webUrl);
        if (payload) this.enqueue(payload);
      }
    } catch (err) {
      this.options.log.warn({ err, session_id: batch.session_id }, 'a notification could not be built');
    }
  }

  /** Queue a notification (dropping the oldest waiting one when full) and start sending. */
  enqueue(payload: NotificationPayload): void {
    if (this.closed) return;
    // The head is being sent while `sending`: a full queue drops the oldest one after it.
    if (this.queue.length >= this.capacity) {
      this.queue.splice(this.sending && this.queue.length > 1 ? 1 : 0, 1);
      this.dropped++;
      this.droppedSinceLog++;
      const now = Date.now();
      if (now - this.lastDropLog >= DROP_LOG_INTERVAL_MS) {
        this.options.log.warn({ dropped: this.droppedSinceLog, dropped_total: this.dropped, capacity: this.capacity, url: redactUrl(this.options.config.url) }, 'notification queue full: dropped the oldest');
        this.lastDropLog = now;
        this.droppedSinceLog = 0;
      }
    }
    this.queue.push(payload);
    if (!this.sending) void this.drain();
  }

  /** Stop: drop what waits, abort the POST in flight. */
  close(): void {
    this.closed = true;
    this.queue.length = 0;
    this.inFlight.abort();
    if (this.retryTimer) clearTimeout(this.retryTimer);
    this.wake?.();
  }

  private async drain(): Promise<void> {
    this.sending = true;
    try {
      while (!this.closed && this.queue.length > 0) {
        const payload = this.queue[0]!;
        await this.deliver(payload);
        if (this.queue[0] === payload) this.queue.shift();
      }
    } finally {
      this.sending = false;
    }
  }

  /** Send one notification, retrying with backoff; never throws. */
  private async deliver(payload: NotificationPayload): Promise<void> {
    const request = encodeNotification(payload, this.options.config.format, this.secret);
    const url = redactUrl(this.options.config.url);
    for (let attempt = 1; !this.closed; attempt++) {
      const outcome = await this.post(request.body, request.headers);
      if (outcome.ok) {
        this.delivered++;
        this.options.log.debug({ event: payload.event, session_id: payload.session_id, attempt }, 'notification sent');
        return;
      }
      const last = !outcome.retry || attempt >= this.maxAttempts;
      this.options.log.warn(
        { event: payload.event, session_id: payload.session_id, url, attempt, error: outcome.error, ...(!last && { retry_in_ms: this.backoff(attempt) }) },
        last ? 'notification failed: giving up' : 'notification failed: retrying',
      );
      if (last) {
        this.failed++;
        return;
      }
      await this.sleep(this.backoff(attempt));
    }
  }

  private backoff(attempt: number): number {
    return Math.min(NOTIFY_MAX_RETRY_MS, this.firstRetryMs * 2 ** (attempt - 1));
  }

  private async post(body: string, headers: Record<string, string>): Promise<{ ok: true } | { ok: false; retry: boolean; error: string }> {
    try {
      const res = await fetch(this.options.config.url, {
        method: 'POST',
        body,
        headers,
        redirect: 'error',
        signal: AbortSignal.any([this.inFlight.signal, AbortSignal.timeout(this.timeoutMs)]),
      });
      await res.body?.cancel().catch(() => undefined);
      if (res.ok) return { ok: true };
      return { ok: false, retry: retryable(res.status), error: `HTTP ${res.status}` };
    } catch (err) {
      const e = err as Error & { cause?: { code?: string; message?: string } };
      const error = e.name === 'TimeoutError' ? `no answer within ${this.timeoutMs} ms` : (e.cause?.code ?? e.cause?.message ?? e.message);
      return { ok: false, retry: true, error };
    }
  }

  private sleep(ms: number): Promise<void> {
    return new Promise((resolve) => {
      this.wake = resolve;
      this.retryTimer = setTimeout(resolve, ms);
      this.retryTimer.unref();
    });
  }
}

/** The URL as logged: scheme, host, port and path — never its query (a token may live there) or credentials. */
export function redactUrl(raw: string): string {
  try {
    const u = new URL(raw);
    return `${u.protocol}//${u.host}${u.pathname}`;
  } catch {
    return '(invalid url)';
  }
}
