/** Slash commands of the TUI: parsing, help and completion. */

export interface SlashCommand {
  name: string;
  args: string;
  help: string;
}

export const COMMANDS: SlashCommand[] = [
  { name: 'model', args: '[ROUTE [EFFORT]]', help: 'switch the model route (and reasoning effort); alone: list the routes' },
  { name: 'compact', args: '', help: 'summarize the conversation so far to free context' },
  { name: 'thinking', args: '', help: 'show or collapse the model\'s thinking' },
  { name: 'sessions', args: '', help: 'list sessions (subagents too: /attach ID opens one)' },
  { name: 'tools', args: '', help: 'list the session’s tools (built-in and MCP) and MCP servers' },
  { name: 'attach', args: 'SESSION_ID', help: 'switch to another session' },
  { name: 'new', args: '', help: 'start a new session and switch to it' },
  { name: 'steer', args: 'TEXT', help: 'add a message to the running turn instead of queueing it' },
  { name: 'interrupt', args: '', help: 'interrupt the running turn (same as Esc)' },
  { name: 'reconnect', args: '', help: 'retry the connection now' },
  { name: 'help', args: '', help: 'show commands and keys' },
  { name: 'quit', args: '', help: 'detach and exit (the session keeps running)' },
];

const ALIASES: Record<string, string> = { exit: 'quit', q: 'quit', '?': 'help', switch: 'attach' };

export interface ParsedCommand {
  name: string;
  args: string[];
  /** Everything after the command name, as typed (trimmed). */
  rest: string;
}

/** `/name args…` → parsed command; null if the text is not a command. `//x` is not a command. */
export function parseCommand(text: string): ParsedCommand | null {
  const t = text.trim();
  if (!t.startsWith('/') || t.startsWith('//')) return null;
  const m = /^\/(\S+)\s*([\s\S]*)$/.exec(t);
  if (!m) return null;
  const raw = m[1]!.toLowerCase();
  const rest = m[2]!.trim();
  return { name: ALIASES[raw] ?? raw, args: rest === '' ? [] : rest.split(/\s+/), rest };
}

/** Commands matching a partly typed `/na`, when the input is a single word starting with `/`. */
export function suggest(input: string): SlashCommand[] {
  if (!/^\/\S*$/.test(input)) return [];
  const prefix = input.slice(1).toLowerCase();
  return COMMANDS.filter((c) => c.name.startsWith(prefix));
}

export const KEYS_HELP = [
  'enter send · alt-enter or \\ + enter newline · ↑/↓ history',
  'esc interrupt the running turn · y / a / n answer an approval',
  'pgup / pgdn scroll (older history loads at the top) · ctrl-c twice detach',
  'ctrl-o a tool call\'s whole output (←/→ other calls · q back)',
  'ctrl-a/e line start/end · ctrl-u/k kill · ctrl-w delete word',
];

export function helpText(): string {
  const width = Math.max(...COMMANDS.map((c) => c.name.length + (c.args ? c.args.length + 1 : 0)));
  const cmds = COMMANDS.map((c) => `/${(c.args ? `${c.name} ${c.args}` : c.name).padEnd(width)}  ${c.help}`);
  return [...cmds, '', ...KEYS_HELP].join('\n');
}
