/**
 * `agentd acp` is durable by construction (docs/editors.md): the daemon killed with -9
 * while a prompt runs — the bridge starts it again (it serves the data dir the bridge
 * was given), reconnects with `after_sequence`, and the prompt gets exactly one answer;
 * a fresh bridge's session/load then shows the same conversation: no update lost or
 * repeated.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import * as acp from '@agentclientprotocol/sdk';
import { afterAll, describe, expect, it } from 'vitest';
import { readDaemonInfo } from '../src/data-dir/data-dir.js';
import { agentText, startEditor, until, type Editor } from './helpers/acp.js';
import { startDaemon, tempDataDir } from './helpers/daemon.js';
import { alive } from './helpers/process.js';

const dataDir = tempDataDir('agentd-acp-durable-');
const cwd = mkdtempSync(join(tmpdir(), 'agentd-acp-cwd-'));
const editors: Editor[] = [];

afterAll(async () => {
  for (const e of editors) await e.close();
  const info = readDaemonInfo(dataDir);
  if (info && alive(info.pid)) {
    process.kill(info.pid, 'SIGTERM');
    await until(() => !alive(info.pid), 15_000, 'the daemon to stop').catch(() => process.kill(info.pid, 'SIGKILL'));
  }
  rmSync(dataDir, { recursive: true, force: true });
  rmSync(cwd, { recursive: true, force: true });
});

function open(): Editor {
  const e = startEditor(['--data-dir', dataDir]);
  editors.push(e);
  return e;
}

describe('agentd acp survives the daemon', () => {
  it('kill -9 mid-prompt: the bridge restarts the daemon, the prompt is answered once, nothing lost or repeated', async () => {
    const first = await startDaemon({ dataDir, config: { approval_policy: 'auto' } });
    const editor = open();
    await editor.agent.request(acp.methods.agent.initialize, { protocolVersion: acp.PROTOCOL_VERSION, clientCapabilities: {} });
    const { sessionId } = await editor.agent.request(acp.methods.agent.session.new, { cwd, mcpServers: [] });
    expect((await editor.agent.request(acp.methods.agent.session.prompt, { sessionId, prompt: [{ type: 'text', text: 'before' }] })).stopReason).toBe('end_turn');

    let answers = 0;
    const answer = editor.agent
      .request(acp.methods.agent.session.prompt, { sessionId, prompt: [{ type: 'text', text: '!sleep 3000' }] })
      .then((r) => {
        answers += 1;
        return r;
      });
    const before = agentText(editor.updates, sessionId).length;
    await until(() => agentText(editor.updates, sessionId).length > before, 15_000, 'the sleep reply to start');
    first.proc.kill('SIGKILL');
    await first.exited;

    const res = await answer;
    expect(['end_turn', 'cancelled']).toContain(res.stopReason);
    await until(() => readDaemonInfo(dataDir) !== null && readDaemonInfo(dataDir)!.pid !== first.pid && alive(readDaemonInfo(dataDir)!.pid), 20_000, 'a new daemon');
    // The session goes on after the restart.
    expect((await editor.agent.request(acp.methods.agent.session.prompt, { sessionId, prompt: [{ type: 'text', text: 'after' }] })).stopReason).toBe('end_turn');
    expect(answers).toBe(1);

    const second = open();
    await second.agent.request(acp.methods.agent.initialize, { protocolVersion: acp.PROTOCOL_VERSION, clientCapabilities: {} });
    await second.agent.request(acp.methods.agent.session.load, { sessionId, cwd, mcpServers: [] });
    const live = agentText(editor.updates, sessionId);
    expect(live).toContain('echo: before');
    expect(live).toContain('echo: after');
    expect(agentText(second.updates, sessionId)).toBe(live);
  }, 90_000);
});
