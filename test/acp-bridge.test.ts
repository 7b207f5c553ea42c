/**
 * `agentd acp` end to end (docs/editors.md): the ACP SDK's client side drives the bridge
 * as a child process against a real daemon. new → prompt (streamed chunks, end turn) →
 * a shell call approved through session/request_permission → cancel during `!sleep` →
 * load in a second bridge replays the same conversation → list → config options; an
 * approval answered by another client withdraws the editor's request; images refused.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import * as acp from '@agentclientprotocol/sdk';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { agentText, startEditor, until, type Editor } from './helpers/acp.js';
import { connect } from './helpers/client.js';
import { startDaemon, type Daemon } from './helpers/daemon.js';

let daemon: Daemon;
let editor: Editor;
let cwd: string;
let sessionId: string;
const editors: Editor[] = [];

function open(): Editor {
  const e = startEditor(['--data-dir', daemon.dataDir]);
  editors.push(e);
  return e;
}

beforeAll(async () => {
  daemon = await startDaemon({ config: { approval_policy: 'ask' } });
  cwd = mkdtempSync(join(tmpdir(), 'agentd-acp-cwd-'));
  editor = open();
  await editor.agent.request(acp.methods.agent.initialize, { protocolVersion: acp.PROTOCOL_VERSION, clientCapabilities: {} });
});

afterAll(async () => {
  for (const e of editors) await e.close();
  await daemon?.stop();
  rmSync(cwd, { recursive: true, force: true });
});

const kinds = (e: Editor, sid: string) => e.updates.filter((u) => u.sessionId === sid).map((u) => u.update.sessionUpdate);

describe('agentd acp', () => {
  it('initialize names agentd and its capabilities; no auth methods', async () => {
    const init = await editor.agent.request(acp.methods.agent.initialize, { protocolVersion: acp.PROTOCOL_VERSION, clientCapabilities: {} });
    expect(init.protocolVersion).toBe(1);
    expect(init.agentInfo?.name).toBe('agentd');
    expect(init.agentCapabilities).toMatchObject({ loadSession: true, promptCapabilities: { embeddedContext: true }, sessionCapabilities: { list: {}, resume: {} } });
    expect(init.authMethods).toEqual([]);
  });

  it('session/new, then a prompt streams the reply as chunks and ends the turn', async () => {
    const created = await editor.agent.request(acp.methods.agent.session.new, { cwd, mcpServers: [] });
    sessionId = created.sessionId;
    expect(created.configOptions?.map((o) => o.id)).toEqual(['model', 'mode']);
    expect(created.configOptions?.find((o) => o.id === 'mode')).toMatchObject({ currentValue: 'ask' });
    const res = await editor.agent.request(acp.methods.agent.session.prompt, { sessionId, prompt: [{ type: 'text', text: 'hello there' }] });
    expect(res.stopReason).toBe('end_turn');
    expect(agentText(editor.updates, sessionId)).toBe('echo: hello there');
    expect(kinds(editor, sessionId).filter((k) => k === 'agent_message_chunk').length).toBeGreaterThanOrEqual(2);
  });

  it('a shell call asks through session/request_permission with the four options; allow once runs it', async () => {
    editor.onPermission = async () => ({ outcome: { outcome: 'selected', optionId: 'approve' } });
    const res = await editor.agent.request(acp.methods.agent.session.prompt, { sessionId, prompt: [{ type: 'text', text: '!sh echo from-the-shell' }] });
    expect(res.stopReason).toBe('end_turn');
    const ask = editor.permissions.at(-1)!.params;
    expect(ask.options.map((o) => o.kind)).toEqual(['allow_once', 'allow_always', 'reject_once', 'reject_always']);
    expect(ask.options.find((o) => o.kind === 'reject_always')?.name).toBe('Deny and stop the turn');
    expect(ask.toolCall).toMatchObject({ kind: 'execute', title: 'echo from-the-shell' });
    const calls = editor.updates.filter((u) => u.sessionId === sessionId && u.update.sessionUpdate === 'tool_call');
    expect(calls.at(-1)!.update).toMatchObject({ kind: 'execute', status: 'in_progress', rawInput: { command: 'echo from-the-shell' } });
    const end = editor.updates.filter((u) => u.update.sessionUpdate === 'tool_call_update' && (u.update as { status?: string }).status).at(-1)!;
    expect(end.update).toMatchObject({ status: 'completed' });
    expect(JSON.stringify(end.update)).toContain('from-the-shell');
  });

  it('session/cancel during !sleep answers the prompt cancelled', async () => {
    const before = agentText(editor.updates, sessionId).length;
    const answer = editor.agent.request(acp.methods.agent.session.prompt, { sessionId, prompt: [{ type: 'text', text: '!sleep 30000' }] });
    await until(() => agentText(editor.updates, sessionId).length > before, 15_000, 'the sleep reply to start');
    await editor.agent.notify(acp.methods.agent.session.cancel, { sessionId });
    expect((await answer).stopReason).toBe('cancelled');
  });

  it('an image is refused with invalid params', async () => {
    await expect(
      editor.agent.request(acp.methods.agent.session.prompt, { sessionId, prompt: [{ type: 'image', data: 'AAAA', mimeType: 'image/png' }] }),
    ).rejects.toMatchObject({ code: -32602 });
  });

  it('session/load in a second bridge replays the same conversation, then answers; list shows the session', async () => {
    const second = open();
    await second.agent.request(acp.methods.agent.initialize, { protocolVersion: acp.PROTOCOL_VERSION, clientCapabilities: {} });
    await second.agent.request(acp.methods.agent.session.load, { sessionId, cwd, mcpServers: [] });
    expect(agentText(second.updates, sessionId)).toBe(agentText(editor.updates, sessionId));
    const users = second.updates.filter((u) => u.update.sessionUpdate === 'user_message_chunk').map((u) => (u.update as { content: { text: string } }).content.text);
    expect(users).toEqual(['hello there', '!sh echo from-the-shell', '!sleep 30000']);
    expect(kinds(second, sessionId)).toContain('tool_call');
    const list = await second.agent.request(acp.methods.agent.session.list, {});
    expect(list.sessions.find((s) => s.sessionId === sessionId)).toMatchObject({ cwd });
    await second.close();
  });

  it('set_config_option: mode auto runs the next call without asking; model stays a listed route', async () => {
    const res = await editor.agent.request(acp.methods.agent.session.setConfigOption, { sessionId, configId: 'mode', value: 'auto' });
    expect(res.configOptions.find((o) => o.id === 'mode')).toMatchObject({ currentValue: 'auto' });
    const model = await editor.agent.request(acp.methods.agent.session.setConfigOption, { sessionId, configId: 'model', value: 'scripted' });
    expect(model.configOptions.find((o) => o.id === 'model')).toMatchObject({ currentValue: 'scripted' });
    const asked = editor.permissions.length;
    const out = await editor.agent.request(acp.methods.agent.session.prompt, { sessionId, prompt: [{ type: 'text', text: '!sh true' }] });
    expect(out.stopReason).toBe('end_turn');
    expect(editor.permissions.length).toBe(asked);
  });

  it('an approval answered by another client withdraws the editor request; the prompt still ends', async () => {
    const created = await editor.agent.request(acp.methods.agent.session.new, { cwd, mcpServers: [] });
    const sid = created.sessionId;
    editor.onPermission = ({ signal }) => new Promise((resolve) => signal.addEventListener('abort', () => resolve({ outcome: { outcome: 'cancelled' } })));
    const asked = editor.permissions.length;
    const answer = editor.agent.request(acp.methods.agent.session.prompt, { sessionId: sid, prompt: [{ type: 'text', text: '!sh echo elsewhere' }] });
    await until(() => editor.permissions.length > asked, 15_000, 'the permission request');
    const other = await connect(daemon);
    const attached = await other.attach(sid, { replay_batches: 0 });
    const pending = attached.session.pending_approval as { approval_id: string };
    await other.submit(sid, 'ap-elsewhere', { type: 'exec_approval', id: pending.approval_id, decision: 'approve' });
    await until(() => editor.permissions.at(-1)!.signal.aborted, 15_000, 'the request to be withdrawn');
    expect((await answer).stopReason).toBe('end_turn');
    await other.close();
  });
});
