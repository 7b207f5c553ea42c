/**
 * A full disk fails the turn and says so truthfully (docs/architecture.md, issue 11.10). A real
 * SQLITE_FULL (max_page_count) while a tool call runs fails the turn
 * `journal_write_failed` as soon as a commit succeeds again; when no commit succeeds the
 * session pauses saying why, and re-attaching resumes the turn with a result and a warning
 * that name the journal failure, never "the daemon restarted". Real SessionHost, real
 * SQLite file, real shell commands.
 */
import { expect, test } from 'vitest';
import { msg, openTestHost, terminalCount, Watcher, type Harness } from './helpers/session.js';

let h: Harness | undefined;

async function startWithTool(command: string) {
  h = await openTestHost({ approval_policy: 'auto' });
  const id = (await h.host.create({ cwd: h.dir })).session_id;
  const s = (await h.host.open(id))!;
  const w = new Watcher(s);
  const stopped: string[] = [];
  s.onStopped((reason) => stopped.push(reason));
  s.submit(msg('warm up'));
  await w.next('turn_complete');
  s.submit(msg(`!sh ${command}`));
  await w.next('tool_call_begin');
  await new Promise((r) => setTimeout(r, 100)); // the call's start is committed
  return { id, s, w, stopped, db: h.host.journal.withDatabase((d) => d) };
}

const events = async (id: string) => (await h!.host.readAfter(id, 0, 10_000)).flatMap((b) => b.events);

test('SQLITE_FULL on a running tool call: the turn fails journal_write_failed once a commit succeeds, truthfully', async () => {
  // The command prints 600 KB after a pause: its output cannot be journaled.
  const { id, w, stopped, db } = await startWithTool(`sleep 0.3; head -c 600000 /dev/zero | tr '\\0' x`);
  db.pragma('wal_checkpoint(TRUNCATE)');
  db.pragma(`max_page_count = ${db.pragma('page_count', { simple: true }) as number}`);
  const failed = await w.next('turn_failed', 1, 10_000);
  expect(failed.error.code).toBe('journal_write_failed');
  expect(failed.error.message).toMatch(/full/i);
  expect(stopped).toEqual([]);
  const end = w.msgs('tool_call_end').at(-1) as { output: string };
  // The command did run: its outcome is unknown, it is not "not run".
  expect(end.output).toMatch(/while this tool call was running; its outcome is unknown/);
  db.pragma('max_page_count = 1073741823');
  expect(terminalCount(await events(id))).toBe(2);
});

test('no commit succeeds: the session pauses saying why; re-attaching resumes the turn naming the journal failure', async () => {
  const { id, stopped, db } = await startWithTool('sleep 0.3; echo done');
  // Every write fails from here on, as on a full disk.
  db.exec(`CREATE TEMP TRIGGER full_disk BEFORE UPDATE ON sessions BEGIN SELECT RAISE(ABORT, 'database or disk is full'); END;`);
  await new Promise<void>((resolve) => {
    const t = setInterval(() => stopped.length > 0 && (clearInterval(t), resolve()), 20);
  });
  expect(stopped[0]).toMatch(/paused: the journal cannot commit \(.*disk is full\)/);
  expect(h!.host.isResident(id)).toBe(false);
  db.exec('DROP TRIGGER full_disk');
  const again = (await h!.host.open(id))!;
  const aw = new Watcher(again);
  await aw.until((ev) => terminalCount(ev) === 1, 10_000, 'the turn ends');
  const all = await events(id);
  const ends = all.filter((e) => e.msg.type === 'tool_call_end').map((e) => (e.msg as { output: string }).output);
  expect(ends.some((o) => /restarted/.test(o))).toBe(false);
  expect(ends.at(-1)).toMatch(/session paused while this tool call was running \(.*disk is full\)/);
  const warnings = all.filter((e) => e.msg.type === 'warning').map((e) => (e.msg as { message: string }).message);
  expect(warnings.some((m) => /paused because the journal could not commit.*disk is full/.test(m))).toBe(true);
  expect(terminalCount(all)).toBe(all.filter((e) => e.msg.type === 'turn_started').length);
});
