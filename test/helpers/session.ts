/** Helpers for driving a real SessionHost (real SQLite file in a temp dir) from tests. */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { onTestFinished } from 'vitest';
import type { Event, EventMsg, Submission } from '../../protocol/index.js';
import { parseConfig } from '../../src/config/config.js';
import type { CommittedBatch } from '../../src/session/api.js';
import { SessionHost, type SessionHostOptions } from '../../src/session/host.js';
import type { Session } from '../../src/session/session.js';

export function tempDir(prefix = 'agentd-test-'): string {
  return mkdtempSync(join(tmpdir(), prefix));
}

export interface Harness {
  dir: string;
  host: SessionHost;
  close(): Promise<void>;
  reopen(extra?: Partial<SessionHostOptions>): Promise<SessionHost>;
}

export async function openHost(config: unknown = {}, extra: Partial<SessionHostOptions> = {}, dir = tempDir()): Promise<Harness> {
  const parsed = parseConfig(config);
  const h: Harness = {
    dir,
    host: await SessionHost.open({ dataDir: dir, config: parsed, ...extra }),
    async close() {
      await h.host.close();
    },
    async reopen(more = {}) {
      h.host = await SessionHost.open({ dataDir: dir, config: parsed, ...extra, ...more });
      return h.host;
    },
  };
  return h;
}

/** openHost for one test: closed and its data dir removed when the test finishes. */
export async function openTestHost(config: unknown = {}, extra: Partial<SessionHostOptions> = {}): Promise<Harness> {
  const h = await openHost(config, extra);
  onTestFinished(async () => {
    await h.close().catch(() => {});
    cleanup(h.dir);
  });
  return h;
}

export function cleanup(dir: string): void {
  rmSync(dir, { recursive: true, force: true });
}

/** Close a harness and remove its data dir (for afterEach); no-op for undefined. */
export async function disposeHarness(h: Harness | undefined): Promise<void> {
  if (!h) return;
  await h.close();
  cleanup(h.dir);
}

/** Records every batch a session commits, with helpers to wait for events. */
export class Watcher {
  readonly batches: CommittedBatch[] = [];
  private waiters: Array<() => void> = [];
  readonly unsubscribe: () => void;

  constructor(readonly session: Session) {
    this.unsubscribe = session.subscribe((b) => {
      this.batches.push(b);
      for (const w of this.waiters.splice(0)) w();
    });
  }

  get events(): Event[] {
    return this.batches.flatMap((b) => b.events);
  }

  msgs(type?: EventMsg['type']): EventMsg[] {
    const all = this.events.map((e) => e.msg);
    return type ? all.filter((m) => m.type === type) : all;
  }

  /** Wait until `pred` holds over the events so far (or time out). */
  async until(pred: (events: Event[]) => boolean, timeoutMs = 5000, what = 'condition'): Promise<Event[]> {
    const deadline = Date.now() + timeoutMs;
    while (!pred(this.events)) {
      const left = deadline - Date.now();
      if (left <= 0) {
        throw new Error(`timed out waiting for ${what}; events: ${this.msgs().map((m) => m.type).join(', ')}`);
      }
      await new Promise<void>((resolve) => {
        const t = setTimeout(resolve, Math.min(left, 50));
        this.waiters.push(() => {
          clearTimeout(t);
          resolve();
        });
      });
    }
    return this.events;
  }

  /** Wait for the n-th (1-based) event of a type. */
  async next<T extends EventMsg['type']>(type: T, n = 1, timeoutMs = 5000): Promise<Extract<EventMsg, { type: T }>> {
    await this.until((ev) => ev.filter((e) => e.msg.type === type).length >= n, timeoutMs, `${n}× ${type}`);
    return this.msgs(type)[n - 1] as Extract<EventMsg, { type: T }>;
  }

  count(type: EventMsg['type']): number {
    return this.msgs(type).length;
  }
}

let counter = 0;
export function msg(text: string, mode?: 'queue' | 'steer', id = `m${++counter}`): Submission {
  return { id, op: { type: 'message', text, ...(mode && { mode }) } };
}

export function op(o: Submission['op'], id = `o${++counter}`): Submission {
  return { id, op: o };
}

export const TERMINAL = ['turn_complete', 'turn_interrupted', 'turn_failed'] as const;

export function terminalCount(events: Event[]): number {
  return events.filter((e) => (TERMINAL as readonly string[]).includes(e.msg.type)).length;
}
