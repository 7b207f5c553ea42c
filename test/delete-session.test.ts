/**
 * `delete_session` through a real daemon on SQLite (docs/sessions.md#deleting-sessions):
 * a session with a subagent child is deleted while clients are attached to both (each
 * gets `session_deleted` and is detached); a turn waiting for approval is refused `busy`
 * until `force`, which interrupts it first; `agentd rm` and its exit codes; the deleted
 * sessions stay gone after a restart, and their text is in none of the database files.
 */
import { existsSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { connect, type Frame, type TestClient } from './helpers/client.js';
import { runAgentd, startDaemon, tempDataDir, type Daemon } from './helpers/daemon.js';

const MARKER = 'zq-daemon-delete-4b9e';
const T = 20_000;

describe('delete_session through the daemon (sqlite)', () => {
  const dataDir = tempDataDir('agentd-delete-');
  const config = { approval_policy: 'auto', workspace: dataDir };
  let d: Daemon;
  let a: TestClient;
  const agentd = (...args: string[]) => runAgentd([...args, '--data-dir', dataDir]);
  const dbText = (): string =>
    ['agentd.db', 'agentd.db-wal'].map((f) => join(dataDir, f)).filter(existsSync).map((f) => readFileSync(f).toString('latin1')).join('');
  const listed = async (c: TestClient): Promise<string[]> =>
    ((await c.ok({ type: 'list_sessions', limit: 1000, include_children: true })).sessions as Frame[]).map((s) => s.session_id as string);
  let deleted: string[] = [];

  beforeAll(async () => {
    d = await startDaemon({ dataDir, config });
    a = await connect(d);
  }, 30_000);

  afterAll(async () => {
    await d?.stop();
    rmSync(dataDir, { recursive: true, force: true });
  });

  test('clients attached to the session and to its child get session_deleted; both are gone', async () => {
    const sid = (await a.createSession({ approval_policy: 'auto', title: `${MARKER} title` })).session_id as string;
    await a.attach(sid);
    const m = await a.submitMessage(sid, `!delegate ${MARKER} child task`);
    await a.waitTurnEnd(sid, m, T);
    const child = (a.events(sid).find((e) => e.type === 'subagent_started')!.child_session_id) as string;
    const keep = (await a.createSession({ approval_policy: 'auto', title: 'keep me' })).session_id as string;

    const onParent = await connect(d);
    await onParent.attach(sid);
    const onChild = await connect(d);
    await onChild.attach(child);
    expect(dbText()).toContain(MARKER);

    const answer = await a.ok({ type: 'delete_session', session_id: sid });
    expect(answer).toMatchObject({ type: 'session_deleted', session_id: sid, deleted_session_ids: [sid, child] });
    for (const c of [onParent, onChild]) {
      const told = await c.waitFor((f) => f.type === 'session_deleted' && f.req_id === undefined, T);
      expect(told).toEqual({ type: 'session_deleted', session_id: sid, deleted_session_ids: [sid, child] });
    }
    const ids = await listed(a);
    expect(ids).not.toContain(sid);
    expect(ids).not.toContain(child);
    expect(ids).toContain(keep);
    for (const id of [sid, child]) {
      expect(await a.request({ type: 'attach', session_id: id })).toMatchObject({ type: 'error', code: 'unknown_session' });
      expect(await a.request({ type: 'history', session_id: id, before_sequence: 1000 })).toMatchObject({ type: 'error', code: 'unknown_session' });
    }
    expect(await a.request({ type: 'delete_session', session_id: sid })).toMatchObject({ type: 'error', code: 'unknown_session' });
    expect(dbText()).not.toContain(MARKER);
    expect(dbText()).toContain('keep me');
    deleted.push(sid, child);
    await Promise.all([onParent.close(), onChild.close()]);
  }, 60_000);

  test('a turn waiting for approval: busy, agentd rm exits 3; --force interrupts it first, then deletes', async () => {
    const sid = (await a.createSession({ approval_policy: 'ask', title: `${MARKER} busy` })).session_id as string;
    const watcher = await connect(d);
    await watcher.attach(sid);
    await a.submitMessage(sid, `!sh echo ${MARKER}`);
    await watcher.waitForEvent(sid, (e) => e.type === 'exec_approval_request', T);

    expect(await a.request({ type: 'delete_session', session_id: sid })).toMatchObject({ type: 'error', code: 'busy' });
    const refused = await agentd('rm', sid);
    expect(refused.code).toBe(3);
    expect(refused.stderr).toContain('--force');
    expect(await listed(a)).toContain(sid);

    const forced = await agentd('rm', '--force', sid);
    expect(forced.stderr).toBe('');
    expect(forced.code).toBe(0);
    expect(forced.stdout).toBe(`deleted ${sid}\n`);
    const told = await watcher.waitFor((f) => f.type === 'session_deleted', T);
    expect(told.session_id).toBe(sid);
    // The interrupted turn's batch came first, and nothing after the notice.
    const frames = watcher.frames;
    const at = frames.indexOf(told);
    const interrupted = frames.findIndex((f) => f.type === 'batch' && f.session_id === sid && (f.events as Frame[]).some((e) => e.msg?.type === 'turn_interrupted'));
    expect(interrupted).toBeGreaterThanOrEqual(0);
    expect(interrupted).toBeLessThan(at);
    expect(frames.slice(at + 1).filter((f) => f.type === 'batch' && f.session_id === sid)).toEqual([]);

    const again = await agentd('rm', sid);
    expect(again.code).toBe(2);
    expect(again.stderr).toContain(`no session ${sid}`);
    deleted.push(sid);
    await watcher.close();
  }, 60_000);

  test('after a restart the deleted sessions stay gone and their text is in no database file', async () => {
    await a.close();
    await d.stop();
    expect(dbText()).not.toContain(MARKER);
    d = await startDaemon({ dataDir, config });
    a = await connect(d);
    const ids = await listed(a);
    for (const id of deleted) expect(ids).not.toContain(id);
    expect(ids.length).toBe(1); // "keep me"
    for (const id of deleted) expect(await a.request({ type: 'attach', session_id: id })).toMatchObject({ type: 'error', code: 'unknown_session' });
    expect(dbText()).not.toContain(MARKER);
  }, 60_000);
});

describe('retention.delete_after_days (sqlite)', () => {
  test('sessions idle longer than the configured days are deleted at start, with their children; the others stay', async () => {
    const dataDir = tempDataDir('agentd-retention-');
    const config = { approval_policy: 'auto', workspace: dataDir };
    let d = await startDaemon({ dataDir, config });
    try {
      let c = await connect(d);
      const old = (await c.createSession({ approval_policy: 'auto', title: `${MARKER} old` })).session_id as string;
      await c.attach(old);
      const m = await c.submitMessage(old, `!delegate ${MARKER} old child`);
      await c.waitTurnEnd(old, m, T);
      const child = c.events(old).find((e) => e.type === 'subagent_started')!.child_session_id as string;
      const fresh = (await c.createSession({ approval_policy: 'auto', title: 'fresh' })).session_id as string;
      await c.close();
      await d.stop();
      // Ten days without activity for `old` (and its child, which would not be swept on its own).
      const Database = (await import('better-sqlite3')).default;
      const db = new Database(join(dataDir, 'agentd.db'));
      db.pragma('secure_delete = ON'); // as the daemon does: the edit leaves no old checkpoint text behind
      const tenDaysAgo = Date.now() - 10 * 24 * 3600 * 1000;
      db.prepare("UPDATE sessions SET checkpoint = json_set(checkpoint, '$.updated_at', ?) WHERE session_id IN (?, ?)").run(tenDaysAgo, old, child);
      db.close();

      d = await startDaemon({ dataDir, config: { ...config, retention: { delete_after_days: 7 } } });
      c = await connect(d);
      const listedIds = async (): Promise<string[]> =>
        ((await c.ok({ type: 'list_sessions', limit: 1000, include_children: true })).sessions as Frame[]).map((s) => s.session_id as string);
      let ids = await listedIds();
      for (let i = 0; i < 100 && ids.includes(old); i++) {
        await new Promise((r) => setTimeout(r, 100));
        ids = await listedIds();
      }
      expect(ids).not.toContain(old);
      expect(ids).not.toContain(child);
      expect(ids).toContain(fresh);
      expect(dbTextOf(dataDir)).not.toContain(MARKER);
      await c.close();
    } finally {
      await d.stop();
      rmSync(dataDir, { recursive: true, force: true });
    }
  }, 90_000);
});

function dbTextOf(dataDir: string): string {
  return ['agentd.db', 'agentd.db-wal'].map((f) => join(dataDir, f)).filter(existsSync).map((f) => readFileSync(f).toString('latin1')).join('');
}
