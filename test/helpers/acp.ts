/**
 * An editor for tests: the ACP SDK's own client side driving `agentd acp` as a child
 * process (stdin/stdout), recording every `session/update` and answering
 * `session/request_permission` through a test-supplied function.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { Readable, Writable } from 'node:stream';
import * as acp from '@agentclientprotocol/sdk';
import { BIN, ROOT } from './daemon.js';

export interface PermissionCall {
  params: acp.RequestPermissionRequest;
  /** Aborted when the agent withdraws the request ($/cancel_request). */
  signal: AbortSignal;
}

export interface Editor {
  proc: ChildProcess;
  agent: acp.ClientContext;
  updates: acp.SessionNotification[];
  permissions: PermissionCall[];
  /** Answers permission requests (default: never, until withdrawn). */
  onPermission: (call: PermissionCall) => Promise<acp.RequestPermissionResponse>;
  stderr(): string;
  close(): Promise<void>;
}

export function startEditor(args: string[], env: Record<string, string | undefined> = {}): Editor {
  const proc = spawn(process.execPath, [BIN, 'acp', ...args], {
    cwd: ROOT,
    env: { ...process.env, AGENTD_TOKEN: undefined, AGENTD_URL: undefined, AGENTD_LOG_LEVEL: 'warn', ...env },
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  let stderr = '';
  proc.stderr!.on('data', (d: Buffer) => (stderr += d.toString()));
  const editor: Editor = {
    proc,
    agent: undefined as unknown as acp.ClientContext,
    updates: [],
    permissions: [],
    onPermission: ({ signal }) =>
      new Promise((resolve) => signal.addEventListener('abort', () => resolve({ outcome: { outcome: 'cancelled' } }))),
    stderr: () => stderr,
    close: async () => {
      if (proc.exitCode !== null) return;
      const exited = new Promise((r) => proc.once('exit', r));
      proc.stdin!.end();
      const timer = setTimeout(() => proc.kill('SIGKILL'), 5000);
      await exited;
      clearTimeout(timer);
    },
  };
  const conn = acp
    .client({ name: 'test-editor' })
    .onNotification(acp.methods.client.session.update, ({ params }) => {
      editor.updates.push(params);
    })
    .onRequest(acp.methods.client.session.requestPermission, ({ params, signal }) => {
      const call = { params, signal };
      editor.permissions.push(call);
      return editor.onPermission(call);
    })
    .connect(acp.ndJsonStream(Writable.toWeb(proc.stdin!) as WritableStream<Uint8Array>, Readable.toWeb(proc.stdout!) as ReadableStream<Uint8Array>));
  editor.agent = conn.agent;
  return editor;
}

/** The text of the agent message chunks of a session, in order. */
export function agentText(updates: readonly acp.SessionNotification[], sessionId: string): string {
  return updates
    .filter((u) => u.sessionId === sessionId && u.update.sessionUpdate === 'agent_message_chunk')
    .map((u) => ((u.update as { content: { type: string; text?: string } }).content.text ?? ''))
    .join('');
}

export async function until(cond: () => boolean, ms = 15_000, what = 'condition'): Promise<void> {
  const end = Date.now() + ms;
  while (!cond()) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}
