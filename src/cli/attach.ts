/**
 * `agentd attach [SESSION_ID] [--new]`: the terminal UI (src/tui). Without a session id
 * and without --new it attaches to the most recently updated session, or creates one.
 *
 * Exit codes: 0 detached, 2 usage / connection / unknown session.
 */
import { Command, Option } from 'commander';
import { ApprovalPolicySchema, type ApprovalPolicy, type CreateSessionConfig, type SessionDescriptor } from '../../protocol/index.js';
import type { AgentdClient } from '../client/client.js';
import { addConnectionOptions, connectClient, type ConnectionFlags } from './connect.js';
import { CliExit, EXIT, attachFailure, runCliCommand } from './exit.js';
import { TuiController } from '../tui/controller.js';
import { scrollbackText } from '../tui/scrollback.js';
import { packageVersion } from './version.js';

export interface AttachFlags extends ConnectionFlags {
  new?: boolean;
  model?: string;
  cwd?: string;
  approvalPolicy?: ApprovalPolicy;
  title?: string;
}

/**
 * Enter/leave the terminal's alternate screen (the TUI is full-screen; the shell's screen
 * comes back on exit, and the conversation is then printed to it so it stays in the scrollback).
 */
const ALT_SCREEN_ON = '\x1b[?1049h\x1b[H\x1b[2J';
const ALT_SCREEN_OFF = '\x1b[?1049l';
/** Bracketed paste: pasted newlines stay in the message instead of sending it. */
const PASTE_ON = '\x1b[?2004h';
const PASTE_OFF = '\x1b[?2004l';

export function registerAttach(program: Command): void {
  const cmd = new Command('attach')
    .description('open the terminal UI on a session (default: the most recently updated one, or a new one)')
    .argument('[session_id]', 'session to attach to')
    .option('--new', 'start a new session')
    .option('--model <route>', 'model route for a new session')
    .option('--cwd <dir>', 'working directory for a new session')
    .addOption(new Option('--approval-policy <policy>', 'approval policy for a new session').choices(ApprovalPolicySchema.options))
    .option('--title <title>', 'title for a new session')
    .version(packageVersion(), '-V, --version', 'print the version')
    .addHelpText(
      'after',
      `
Keys: Enter send · Alt-Enter newline · Esc interrupt · y/a/n answer approvals ·
PgUp/PgDn scroll (older history loads at the top) · Ctrl-O a tool call's whole output ·
Ctrl-C twice or /quit detach (the conversation is printed to the terminal's scrollback).
Commands: /model ROUTE, /sessions, /attach ID, /new, /steer TEXT, /help, /quit.
Detaching never stops the session; attach again to pick up where it is.`,
    );
  addConnectionOptions(cmd);
  cmd.action((sessionId: string | undefined, flags: AttachFlags) =>
    runCliCommand('attach', () => attach(sessionId, flags)),
  );
  program.addCommand(cmd);
}

function createConfig(flags: AttachFlags): CreateSessionConfig {
  const config: CreateSessionConfig = {};
  if (flags.model) config.model_route = flags.model;
  if (flags.cwd) config.cwd = flags.cwd;
  if (flags.approvalPolicy) config.approval_policy = flags.approvalPolicy;
  if (flags.title) config.title = flags.title;
  return config;
}

/** The session to open: the given one, a new one (--new), else the most recently updated or a new one. */
export async function chooseSession(
  client: Pick<AgentdClient, 'createSession' | 'listAllSessions'>,
  sessionId: string | undefined,
  createNew: boolean,
  config: CreateSessionConfig = {},
): Promise<{ sessionId: string; created: boolean }> {
  if (sessionId && createNew) throw new CliExit('give either a SESSION_ID or --new, not both');
  if (sessionId) return { sessionId, created: false };
  if (!createNew) {
    const sessions = await client.listAllSessions();
    const latest = mostRecent(sessions);
    if (latest) return { sessionId: latest.session_id, created: false };
  }
  const d = await client.createSession(config);
  return { sessionId: d.session_id, created: true };
}

export function mostRecent(sessions: readonly SessionDescriptor[]): SessionDescriptor | undefined {
  let best: SessionDescriptor | undefined;
  for (const s of sessions) if (!best || s.updated_at > best.updated_at) best = s;
  return best;
}

async function attach(sessionId: string | undefined, flags: AttachFlags): Promise<number> {
  if (!process.stdin.isTTY || !process.stdout.isTTY) {
    throw new CliExit('attach needs an interactive terminal; for scripts use "agentd send" and "agentd sessions"');
  }
  const client = await connectClient(flags, `agentd-tui/${packageVersion()}`);
  const controller = new TuiController(client);
  let chosen: string;
  try {
    const c = await chooseSession(client, sessionId, Boolean(flags.new), createConfig(flags));
    chosen = c.sessionId;
    await controller.open(chosen);
  } catch (err) {
    client.close();
    throw attachFailure(err, sessionId);
  }

  // Ink renders nothing until exit when it believes it runs in CI (CI=… in the
  // environment). On a real terminal the user is interactive whatever CI says.
  if (process.stdout.isTTY) {
    if (process.env.CI !== undefined) process.env.CI = 'false';
    if (process.env.CONTINUOUS_INTEGRATION !== undefined) process.env.CONTINUOUS_INTEGRATION = 'false';
  }
  // Loaded here, not at start-up: Ink takes most of a second to import, which the
  // other subcommands should not pay.
  const [{ render }, { createElement }, { App }] = await Promise.all([
    import('ink'),
    import('react'),
    import('../tui/app.js'),
  ]);
  process.stdout.write(ALT_SCREEN_ON + PASTE_ON);
  const restore = () => process.stdout.write(PASTE_OFF + ALT_SCREEN_OFF);
  process.once('exit', restore);
  const app = render(createElement(App, { controller }), {
    exitOnCtrlC: false,
    patchConsole: true,
    maxFps: 30,
  });
  try {
    await app.waitUntilExit();
  } finally {
    app.cleanup();
    restore();
    process.off('exit', restore);
    controller.dispose();
    client.close();
  }
  const current = controller.getState().sessionId ?? chosen;
  controller.flush(); // batches that arrived in the last few ms, not yet shown
  const colors = !process.env.NO_COLOR && Boolean(process.stdout.isTTY);
  process.stdout.write(scrollbackText(controller.getState(), process.stdout.columns ?? 80, colors));
  process.stdout.write(`Detached from session ${current}; it keeps running.\nReattach with: agentd attach ${current}\n`);
  return EXIT.ok;
}
