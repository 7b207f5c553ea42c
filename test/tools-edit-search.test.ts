/**
 * edit_file, glob, grep and AGENTS.md through the real daemon and socket, driven by the
 * scripted model's `!tool NAME JSON` and `!system` commands (docs/tools.md).
 */
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, test } from 'vitest';
import { connect, type TestClient } from './helpers/client.js';
import { startDaemon, type Daemon } from './helpers/daemon.js';
import { cleanup, tempDir } from './helpers/session.js';
import { waitUntil } from './helpers/process.js';
import { chunk, sse, startFakeOpenAI } from './helpers/fake-openai.js';

/** Threads of process `pid` now (Linux). */
const threads = (pid: number) => Number(/^Threads:\s+(\d+)/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))![1]);

let d: Daemon;
let c: TestClient;
const dirs: string[] = [];
beforeAll(async () => {
  d = await startDaemon({ config: { approval_policy: 'auto' } });
  c = await connect(d);
});
afterAll(async () => {
  await c?.close().catch(() => {});
  await d?.stop('SIGKILL').catch(() => {});
  dirs.splice(0).forEach(cleanup);
});

async function session(policy: 'auto' | 'ask' = 'auto', parent?: string) {
  const cwd = parent ? join(parent, 'sub') : tempDir('agentd-tools-');
  if (parent) mkdirSync(cwd, { recursive: true });
  else dirs.push(cwd);
  const s = (await c.createSession({ approval_policy: policy, cwd })).session_id as string;
  await c.attach(s);
  return { s, cwd };
}

/** Runs `!tool NAME ARGS` and answers its tool_call_end. */
async function call(s: string, tool: string, args: object) {
  const id = await c.submitMessage(s, `!tool ${tool} ${JSON.stringify(args)}`);
  await c.waitTurnEnd(s, id, 30_000);
  const ends = c.events(s).filter((m) => m.type === 'tool_call_end');
  return ends[ends.length - 1]!;
}

test('edit_file applies an exact replacement and answers a unified diff; each error case is typed', async () => {
  const { s, cwd } = await session();
  writeFileSync(join(cwd, 'a.txt'), 'one\ntwo\nthree\ntwo\n');
  const ok = await call(s, 'edit_file', { path: 'a.txt', old_string: 'three', new_string: 'THREE' });
  expect(ok.status).toBe('ok');
  expect(readFileSync(join(cwd, 'a.txt'), 'utf8')).toBe('one\ntwo\nTHREE\ntwo\n');
  expect(ok.output).toContain('--- a/a.txt\n+++ b/a.txt\n');
  expect(ok.output).toContain('\n-three\n+THREE\n');

  const cases: [object, string][] = [
    [{ path: 'missing.txt', old_string: 'x', new_string: 'y' }, 'edit_missing_file'],
    [{ path: 'a.txt', old_string: 'nowhere', new_string: 'y' }, 'edit_not_found'],
    [{ path: 'a.txt', old_string: 'two', new_string: '2' }, 'edit_ambiguous'],
    [{ path: 'a.txt', old_string: 'one', new_string: 'one' }, 'edit_no_change'],
    [{ path: 'a.txt', old_string: '', new_string: 'y' }, 'edit_invalid_arguments'],
  ];
  for (const [args, code] of cases) {
    const end = await call(s, 'edit_file', args);
    expect(end.status, code).toBe('error');
    expect(end.output).toMatch(new RegExp(`^${code}: `));
  }
  expect(readFileSync(join(cwd, 'a.txt'), 'utf8')).toBe('one\ntwo\nTHREE\ntwo\n');
  const ambiguous = await call(s, 'edit_file', { path: 'a.txt', old_string: 'two', new_string: '2' });
  expect(ambiguous.output).toContain('found 2 times');

  const all = await call(s, 'edit_file', { path: 'a.txt', old_string: 'two', new_string: '2', replace_all: true });
  expect(all.output).toMatch(/^edited a\.txt: 2 replacements\n/);
  expect(readFileSync(join(cwd, 'a.txt'), 'utf8')).toBe('one\n2\nTHREE\n2\n');
  const escape = await call(s, 'edit_file', { path: '../outside.txt', old_string: 'a', new_string: 'b' });
  expect(escape.status).toBe('error');
});

test('edit_file waits for approval under ask; glob and grep do not', async () => {
  const { s, cwd } = await session('ask');
  writeFileSync(join(cwd, 'b.txt'), 'hello\n');
  const id = await c.submitMessage(s, `!tool edit_file ${JSON.stringify({ path: 'b.txt', old_string: 'hello', new_string: 'bye' })}`);
  const req = await c.waitForEvent(s, (m) => m.type === 'exec_approval_request');
  expect(readFileSync(join(cwd, 'b.txt'), 'utf8')).toBe('hello\n');
  await c.submit(s, 'ap1', { type: 'exec_approval', id: req.approval_id, decision: 'approve' });
  await c.waitTurnEnd(s, id);
  expect(readFileSync(join(cwd, 'b.txt'), 'utf8')).toBe('bye\n');
  const g = await call(s, 'grep', { pattern: 'bye' });
  expect(g.output).toBe('b.txt:1:bye');
  expect(c.events(s).filter((m) => m.type === 'exec_approval_request')).toHaveLength(1);
});

test('glob and grep honour .gitignore (nested too), skip .git and binary files, sort and cap', async () => {
  const { s, cwd } = await session();
  for (const dir of ['src/deep', 'build', '.git', 'node_modules/x', 'pkg']) mkdirSync(join(cwd, dir), { recursive: true });
  writeFileSync(join(cwd, '.gitignore'), 'build/\nnode_modules\n*.log\n');
  writeFileSync(join(cwd, 'pkg', '.gitignore'), 'secret.ts\n');
  const files: Record<string, string> = {
    'src/b.ts': 'const needle = 1;\n',
    'src/a.ts': 'x\nneedle here\n',
    'src/deep/c.ts': 'NEEDLE upper\n',
    'build/out.ts': 'needle\n',
    'node_modules/x/i.ts': 'needle\n',
    '.git/config.ts': 'needle\n',
    'debug.log': 'needle\n',
    'pkg/secret.ts': 'needle\n',
    'pkg/open.ts': 'needle\n',
  };
  for (const [p, t] of Object.entries(files)) writeFileSync(join(cwd, p), t);
  writeFileSync(join(cwd, 'src', 'bin.ts'), Buffer.from('needle\0binary\n'));

  const g = await call(s, 'glob', { pattern: '**/*.ts' });
  expect(g.output.split('\n')).toEqual(['pkg/open.ts', 'src/a.ts', 'src/b.ts', 'src/bin.ts', 'src/deep/c.ts']);
  const named = await call(s, 'glob', { pattern: '*.ts', path: 'src' });
  expect(named.output.split('\n')).toEqual(['src/a.ts', 'src/b.ts', 'src/bin.ts', 'src/deep/c.ts']);

  const r = await call(s, 'grep', { pattern: 'needle' });
  expect(r.output.split('\n')).toEqual(['pkg/open.ts:1:needle', 'src/a.ts:2:needle here', 'src/b.ts:1:const needle = 1;']);
  const i = await call(s, 'grep', { pattern: 'needle', ignore_case: true, glob: 'deep/*.ts', path: 'src' });
  expect(i.output).toBe('src/deep/c.ts:1:NEEDLE upper');
  const bad = await call(s, 'grep', { pattern: '(' });
  expect(bad.output).toMatch(/^grep_invalid_regex: /);

  mkdirSync(join(cwd, 'many'));
  writeFileSync(join(cwd, 'many', 'lines.txt'), 'hit\n'.repeat(1500));
  const capped = await call(s, 'grep', { pattern: 'hit', path: 'many' });
  const lines = capped.output.split('\n');
  expect(lines).toHaveLength(1001);
  expect(lines[999]).toBe('many/lines.txt:1000:hit');
  expect(lines[1000]).toMatch(/^\[500 more matches not shown: limit 1000 entries \/ 64 KiB\]$/);
  writeFileSync(join(cwd, 'many', 'wide.txt'), `${'w'.repeat(400)}\n`.repeat(400));
  const bytes = await call(s, 'grep', { pattern: '^w', path: 'many' });
  expect(Buffer.byteLength(bytes.output)).toBeLessThan(64 * 1024 + 200);
  expect(bytes.output).toMatch(/\n\[\d+ more matches not shown/);
});

test('a catastrophic regular expression on a large file neither blocks /healthz nor outlives an interrupt', async () => {
  const { s, cwd } = await session();
  writeFileSync(join(cwd, 'big.txt'), `${'a'.repeat(40)}!\n`.repeat(20_000));
  const id = await c.submitMessage(s, `!tool grep ${JSON.stringify({ pattern: '^(a+)+$' })}`);
  const started = await c.waitForEvent(s, (m) => m.type === 'turn_started');
  await c.waitForEvent(s, (m) => m.type === 'tool_call_begin');
  // The daemon answers while the search runs (generous bound: only "answered at all").
  for (let k = 0; k < 3; k++) {
    const t0 = Date.now();
    expect((await d.healthz()).ok).toBe(true);
    expect(Date.now() - t0).toBeLessThan(2000);
  }
  const pid = (await d.healthz()).pid;
  const during = threads(pid);
  const t0 = Date.now();
  await c.submit(s, 'int-grep', { type: 'interrupt', turn_id: started.turn_id });
  await c.waitForEvent(s, (m) => m.type === 'turn_interrupted', 20_000);
  // Well before the 10 s search time limit.
  expect(Date.now() - t0).toBeLessThan(5000);
  expect(c.events(s).find((m) => m.type === 'tool_call_end')).toMatchObject({ status: 'interrupted' });
  expect(c.events(s).some((m) => m.type === 'turn_complete')).toBe(false);
  // The worker thread running the expression is gone, not left spinning.
  await waitUntil(() => threads(pid) < during, 5000, 'the search worker to end');
  expect((await d.healthz()).ok).toBe(true);
  void id;
});

test("AGENTS.md is in the request's system prompt, from the nearest parent, re-read after a change", async () => {
  const parent = tempDir('agentd-agents-');
  dirs.push(parent);
  writeFileSync(join(parent, 'AGENTS.md'), 'Always answer in haiku.\n');
  const { s } = await session('auto', parent);
  const ask = async () => {
    const id = await c.submitMessage(s, '!system');
    return (await c.waitTurnEnd(s, id)).last_message as string;
  };
  const first = await ask();
  expect(first).toContain('edit_file');
  expect(first).toContain('grep');
  expect(first).toContain('\n# Project instructions (AGENTS.md)\n\nAlways answer in haiku.');
  writeFileSync(join(parent, 'AGENTS.md'), 'Never use the shell.\n'.repeat(5000));
  const second = await ask();
  expect(second).not.toContain('haiku');
  expect(second).toContain('Never use the shell.');
  expect(second).toMatch(/\[AGENTS\.md cut: only its first 64 KiB of 105000 bytes are shown\]$/);
  writeFileSync(join(parent, 'sub', 'AGENTS.md'), 'Nearest wins.\n');
  const third = await ask();
  expect(third).toContain('Nearest wins.');
  expect(third).not.toContain('Never use the shell.');
});

test('through a fake OpenAI-compatible server: one system message holding AGENTS.md, and an edit_file diff sent back to the model', async () => {
  const fake = await startFakeOpenAI();
  const cwd = tempDir('agentd-tools-openai-');
  dirs.push(cwd);
  const dd = await startDaemon({
    config: {
      approval_policy: 'auto',
      models: { default: 'gpt', routes: { gpt: { provider: 'openai', model: 'fake-model', base_url: fake.baseURL, api_key_env: 'FAKE_PROVIDER_KEY' } } },
    },
    env: { FAKE_PROVIDER_KEY: 'sk-test' },
  });
  const cc = await connect(dd);
  try {
    writeFileSync(join(cwd, 'AGENTS.md'), 'Use tabs.\n');
    writeFileSync(join(cwd, 'x.txt'), 'alpha\nbeta\n');
    const s = (await cc.createSession({ approval_policy: 'auto', cwd })).session_id as string;
    await cc.attach(s);
    const args = JSON.stringify({ path: 'x.txt', old_string: 'beta', new_string: 'gamma' });
    fake.enqueue(
      sse([chunk.role(), chunk.tool(0, { id: 'call_e', name: 'edit_file', args }), chunk.finish('tool_calls')]),
      sse([chunk.text('done'), chunk.finish('stop')]),
    );
    const id = await cc.submitMessage(s, 'rename beta');
    expect((await cc.waitTurnEnd(s, id, 30_000)).type).toBe('turn_complete');
    expect(readFileSync(join(cwd, 'x.txt'), 'utf8')).toBe('alpha\ngamma\n');
    for (const req of fake.requests) {
      const systems = req.body.messages.filter((m: { role: string }) => m.role === 'system');
      expect(systems).toHaveLength(1);
      expect(req.body.messages[0].role).toBe('system');
      expect(systems[0].content).toContain('# Project instructions (AGENTS.md)\n\nUse tabs.');
    }
    const toolMsg = fake.requests[1]!.body.messages.find((m: { role: string }) => m.role === 'tool');
    expect(toolMsg.content).toContain('--- a/x.txt\n+++ b/x.txt\n');
    expect(toolMsg.content).toContain('\n-beta\n+gamma');
    const names = fake.requests[0]!.body.tools.map((t: { function: { name: string } }) => t.function.name);
    expect(names).toEqual(expect.arrayContaining(['edit_file', 'glob', 'grep']));
  } finally {
    await cc.close().catch(() => {});
    await dd.stop('SIGKILL').catch(() => {});
    await fake.close();
  }
});
