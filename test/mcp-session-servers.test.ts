/**
 * A session's own MCP servers (`create_session.config.mcp_servers`, docs/tools.md): an
 * editor's servers passed through `agentd acp`'s session/new become that session's tools
 * (a real stdio MCP server fixture), other sessions do not see them, the checkpoint keeps
 * them across a daemon restart, and a bad entry is refused at creation.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import * as acp from '@agentclientprotocol/sdk';
import { afterAll, describe, expect, it } from 'vitest';
import { agentText, startEditor, type Editor } from './helpers/acp.js';
import { connect, type TestClient } from './helpers/client.js';
import { startDaemon, tempDataDir, type Daemon } from './helpers/daemon.js';
import { FIXTURE } from './helpers/mcp.js';

const dataDir = tempDataDir('agentd-mcp-own-');
const cwd = mkdtempSync(join(tmpdir(), 'agentd-mcp-own-cwd-'));
let daemon: Daemon | undefined;
const editors: Editor[] = [];

afterAll(async () => {
  for (const e of editors) await e.close();
  await daemon?.stop();
  rmSync(dataDir, { recursive: true, force: true });
  rmSync(cwd, { recursive: true, force: true });
});

async function toolNames(c: TestClient, sid: string, id: string): Promise<string[]> {
  await c.attach(sid, { replay_batches: 0 });
  await c.submit(sid, id, { type: 'capability_command', capability: 'session', command: 'tools' });
  const out = await c.waitForEvent(sid, (m) => m.type === 'capability_output' && m.command === 'tools' && true);
  return (out.output.tools as Array<{ name: string }>).map((t) => t.name);
}

describe('per-session MCP servers', () => {
  it("the editor's server is the session's own: used by the model, absent elsewhere, kept across a restart", async () => {
    daemon = await startDaemon({ dataDir, config: { approval_policy: 'auto' } });
    const editor = startEditor(['--data-dir', dataDir]);
    editors.push(editor);
    await editor.agent.request(acp.methods.agent.initialize, { protocolVersion: acp.PROTOCOL_VERSION, clientCapabilities: {} });
    const { sessionId } = await editor.agent.request(acp.methods.agent.session.new, {
      cwd,
      mcpServers: [{ name: 'fx', command: process.execPath, args: [FIXTURE, 'normal'], env: [{ name: 'FIXTURE_VAR', value: 'from-editor' }] }],
    });
    const res = await editor.agent.request(acp.methods.agent.session.prompt, { sessionId, prompt: [{ type: 'text', text: '!mcp fx__echo {"text":"hi"}' }] });
    expect(res.stopReason).toBe('end_turn');
    expect(agentText(editor.updates, sessionId)).toContain('echo: hi');
    const call = editor.updates.find((u) => u.update.sessionUpdate === 'tool_call')!;
    expect(call.update).toMatchObject({ kind: 'other', rawInput: { text: 'hi' } });

    let c = await connect(daemon);
    const other = (await c.createSession({ cwd })).session_id as string;
    expect(await toolNames(c, other, 't1')).not.toContain('fx__echo');
    expect(await toolNames(c, sessionId, 't2')).toContain('fx__whoami');
    await c.close();

    await editor.close();
    await daemon.stop();
    daemon = await startDaemon({ dataDir, config: { approval_policy: 'auto' } });
    c = await connect(daemon);
    await c.attach(sessionId, { replay_batches: 0 });
    await c.submitMessage(sessionId, '!mcp fx__whoami {}', 'who1');
    const end = await c.waitTurnEnd(sessionId, 'who1');
    expect(end.type).toBe('turn_complete');
    expect(String(end.last_message)).toContain('from-editor');
    await c.close();
  }, 90_000);

  it('a bad entry is refused at creation with invalid_frame naming the field', async () => {
    const c = await connect(daemon!);
    const bad = await c.request({ type: 'create_session', req_id: 'bad1', config: { cwd, mcp_servers: { 'a__b': { command: 'x' } } } });
    expect(bad).toMatchObject({ type: 'error', code: 'invalid_frame' });
    expect(String(bad.message)).toContain('__');
    const both = await c.request({ type: 'create_session', req_id: 'bad2', config: { cwd, mcp_servers: { x: { command: 'x', url: 'http://127.0.0.1:1/' } } } });
    expect(both).toMatchObject({ type: 'error', code: 'invalid_frame' });
    await c.close();
  });
});
