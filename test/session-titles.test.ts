/** Titles from the first message, renaming, persistence; the default working directory (docs/sessions.md). */
import { mkdirSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, test } from 'vitest';
import { titleFromMessage } from '../protocol/index.js';
import { msg, op, openTestHost, tempDir, Watcher } from './helpers/session.js';

describe('titleFromMessage', () => {
  test('first visible line, controls removed, at most 80 characters', () => {
    expect(titleFromMessage('\n  \n  Fix the build\nand more')).toBe('Fix the build');
    expect(titleFromMessage('a\u001b[31mred\u0007\u202e')).toBe('a red');
    expect(titleFromMessage(' \t\n\r\n')).toBeNull();
    const long = titleFromMessage('x'.repeat(200))!;
    expect(Array.from(long)).toHaveLength(80);
    expect(long.endsWith('…')).toBe(true);
    // Astral characters are not split.
    const emoji = titleFromMessage('😀'.repeat(100))!;
    expect(Array.from(emoji)).toHaveLength(80);
    expect(emoji).not.toMatch(/[\ud800-\udbff](?![\udc00-\udfff])/u);
  });
});

describe('session titles', () => {
  test('an untitled session takes its first message; later messages do not rename it; restart keeps it', async () => {
    const h = await openTestHost({ approval_policy: 'auto' });
    const d = await h.host.create({});
    expect(d.title).toBeNull();
    const s = (await h.host.open(d.session_id))!;
    const w = new Watcher(s);
    s.submit(msg('Refactor the parser\nsecond line'));
    await w.next('turn_complete');
    expect((await h.host.open(d.session_id))!.descriptor().title).toBe('Refactor the parser');
    s.submit(msg('something else'));
    await w.next('turn_complete', 2);
    expect((await h.host.open(d.session_id))!.descriptor().title).toBe('Refactor the parser');
    await h.close();
    await h.reopen();
    expect((await h.host.list({ limit: 10 })).sessions.find((x) => x.session_id === d.session_id)?.title).toBe('Refactor the parser');
  });

  test('a given title is kept; rename through `session title` is seen by attached clients and persisted', async () => {
    const h = await openTestHost({ approval_policy: 'auto' });
    const d = await h.host.create({ title: 'mine' });
    const s = (await h.host.open(d.session_id))!;
    const w = new Watcher(s);
    s.submit(msg('hello there'));
    await w.next('turn_complete');
    expect(s.descriptor().title).toBe('mine');
    s.submit(op({ type: 'capability_command', capability: 'session', command: 'title', arguments: { title: ' new\u001b name ' } }));
    await w.next('capability_output');
    expect(w.msgs('capability_output')[0]).toMatchObject({ command: 'title', output: { title: 'new name' } });
    await h.close();
    await h.reopen();
    expect((await h.host.open(d.session_id))!.descriptor().title).toBe('new name');
  });

  test('a cleared title stays cleared (only the very first message names a session)', async () => {
    const h = await openTestHost({ approval_policy: 'auto' });
    const d = await h.host.create({});
    const s = (await h.host.open(d.session_id))!;
    const w = new Watcher(s);
    s.submit(msg('first words'));
    await w.next('turn_complete');
    s.submit(op({ type: 'capability_command', capability: 'session', command: 'title', arguments: { title: '' } }));
    await w.next('capability_output');
    s.submit(msg('second words'));
    await w.next('turn_complete', 2);
    expect(s.descriptor().title).toBeNull();
  });
});

describe('working directory', () => {
  test('without `workspace` a session runs in the home directory, never the daemon cwd', async () => {
    const h = await openTestHost({});
    expect((await h.host.create({})).cwd).toBe(homedir());
  });

  test('`workspace` is the default; create_session cwd wins; `~/` is the home directory', async () => {
    const ws = join(tempDir('agentd-ws-'), 'work');
    mkdirSync(ws);
    const h = await openTestHost({ workspace: ws });
    expect((await h.host.create({})).cwd).toBe(ws);
    const other = tempDir('agentd-cwd-');
    expect((await h.host.create({ cwd: other })).cwd).toBe(other);
    expect((await h.host.create({ cwd: '~' })).cwd).toBe(homedir());
  });
});
