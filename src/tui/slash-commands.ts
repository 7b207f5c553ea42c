/** What each slash command of the TUI does (the commands themselves: commands.ts). */
import { helpText, type ParsedCommand } from './commands.js';
import type { TuiController } from './controller.js';
import { sessionInfoStatus } from './session-info.js';

/** Run a parsed `/command`; `quit` detaches. Unknown commands get a note. */
export function runSlashCommand(cmd: ParsedCommand, controller: TuiController, quit: () => void): void {
  const info = controller.getState().transcript.info;
  switch (cmd.name) {
    case 'help':
      controller.note('info', 'commands and keys', helpText());
      return;
    case 'model':
      if (cmd.args.length === 0) {
        void controller.listModels();
      } else {
        void controller.setModel(cmd.args[0]!, cmd.args[1]);
      }
      return;
    case 'compact':
      void controller.compact();
      return;
    case 'thinking':
      controller.toggleReasoning();
      return;
    case 'sessions':
      void controller.listSessions();
      return;
    case 'tools':
      void controller.tools();
      return;
    case 'attach':
      if (cmd.args.length !== 1) controller.note('error', 'usage: /attach SESSION_ID');
      else void controller.switchTo(cmd.args[0]!);
      return;
    case 'new':
      void controller.newSession();
      return;
    case 'steer':
      if (cmd.rest === '') controller.note('error', 'usage: /steer TEXT');
      else void controller.sendMessage(cmd.rest, 'steer');
      return;
    case 'interrupt':
      if (sessionInfoStatus(info) === 'idle') controller.note('info', 'nothing to interrupt');
      else void controller.interrupt();
      return;
    case 'reconnect':
      controller.reconnectNow();
      return;
    case 'quit':
      quit();
      return;
    default:
      controller.note('error', `unknown command /${cmd.name} — try /help`);
  }
}
