/**
 * Journal stores for the conformance tests: a fresh SQLite file or a fresh PostgreSQL
 * database per test, each openable several times (reopen = migrations run again), all
 * closed and removed by `closeAll()`; `write()`, a `BatchWrite` builder; polling.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { BatchWrite } from '../../src/journal/journal.js';
import { openPgStore, type PgStoreOptions } from '../../src/journal/pg/store.js';
import { openSqliteStore } from '../../src/journal/sqlite-store.js';
import type { JournalStore } from '../../src/journal/store.js';
import type { PostgresServer } from './postgres.js';

/** One empty journal; `open()` may be called again to reopen it. */
export interface StoreFixture {
  open(): Promise<JournalStore>;
}

const opened: JournalStore[] = [];
const dirs: string[] = [];

export async function sqliteFixture(): Promise<StoreFixture> {
  const dir = mkdtempSync(join(tmpdir(), 'agentd-store-'));
  dirs.push(dir);
  const path = join(dir, 'agentd.db');
  return { open: () => track(openSqliteStore(path)) };
}

/** A fresh database on `server`; `options` (timeouts, pool size, application name) apply to every open. */
export async function pgFixture(server: PostgresServer, options: Omit<PgStoreOptions, 'url'> = {}): Promise<StoreFixture & { url: string }> {
  const url = await server.createDatabase();
  return { url, open: () => track(openPgStore({ url, ...options })) };
}

async function track<T extends JournalStore>(store: Promise<T>): Promise<T> {
  const s = await store;
  opened.push(s);
  return s;
}

export async function closeAll(): Promise<void> {
  await Promise.all(opened.splice(0).map((s) => s.close().catch(() => {})));
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
}

/** A write of `batches` (events JSON arrays) at `head`; the checkpoint names the new head. */
export function write(sessionId: string, head: number, batches: string[], extra: Partial<BatchWrite> = {}): BatchWrite {
  return {
    sessionId,
    head,
    batches,
    checkpoint: JSON.stringify({ session_id: sessionId, head: head + batches.length }),
    unfinished: false,
    transcriptFrom: 0,
    transcript: [],
    admissions: [],
    ...extra,
  };
}

/** An events JSON array of one small event. */
export const events = (text: string): string =>
  JSON.stringify([{ id: `e-${text}`, msg: { type: 'agent_message_delta', delta: text } }]);

/** Resolves once `cond()` holds (polled every 10 ms); throws naming `what` after `ms`. */
export async function waitUntilAsync(cond: () => Promise<boolean>, what: string, ms = 5000): Promise<void> {
  const until = Date.now() + ms;
  while (!(await cond())) {
    if (Date.now() > until) throw new Error(`timed out waiting until ${what}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}
