/**
 * The system prompt of a model call (docs/context.md), in order of precedence: the
 * session's own (`create_session.config.system_prompt`, in the checkpoint), the call's
 * route's `system_prompt`, the config's top-level `system_prompt`, else the built-in
 * default — rebuilt for each call — naming the session's cwd, its tools and the date;
 * then the project instructions (AGENTS.md, project_instructions.ts) unless turned off.
 */
import { configSystemPrompt, type Config } from '../config/config.js';
import type { ModelRoute } from '../model/types.js';
import { withProjectInstructions } from './project_instructions.js';

const DAY_MS = 86_400_000;

/** The last default prompt built: every model call of a session asks for the same one (until the date changes). */
let lastDefault: { cwd: string; toolNames: readonly string[]; day: number; prompt: string } | null = null;

const sameNames = (a: readonly string[], b: readonly string[]) => a.length === b.length && a.every((n, i) => n === b[i]);

/** The built-in default: what the model is, where it works, its tools, today's date (UTC). */
export function defaultSystemPrompt(cwd: string, toolNames: readonly string[], now: number): string {
  const day = Math.floor(now / DAY_MS);
  const last = lastDefault;
  if (last && last.day === day && last.cwd === cwd && sameNames(last.toolNames, toolNames)) return last.prompt;
  const prompt = buildDefaultPrompt(cwd, toolNames, now);
  lastDefault = { cwd, toolNames: [...toolNames], day, prompt };
  return prompt;
}

function buildDefaultPrompt(cwd: string, toolNames: readonly string[], now: number): string {
  const date = new Date(now).toISOString().slice(0, 10);
  const tools = toolNames.length > 0 ? toolNames.join(', ') : 'none';
  return [
    'You are a coding agent hosted by agentd. You work in the directory ' + cwd + ' on the user\'s machine.',
    `Your tools: ${tools}. Relative paths are resolved against that directory; file tools cannot leave it.`,
    'Use the tools to inspect and change things instead of guessing, keep the user informed of what you do, and answer concisely.',
    ...(toolNames.includes('edit_file') ? ['Change files with edit_file (exact text replacement) rather than rewriting them with write_file.'] : []),
    ...(toolNames.includes('grep') ? ['Find files with glob and search their contents with grep rather than through the shell.'] : []),
    `Today is ${date}.`,
  ].join('\n');
}

/** The system prompt for a call on `route` of a session with `own` (its own prompt, or null). */
export function systemPromptFor(
  own: string | null | undefined,
  route: ModelRoute | undefined,
  config: Config,
  cwd: string,
  toolNames: readonly string[],
  now: number,
): string {
  const base = own ?? route?.system_prompt ?? configSystemPrompt(config) ?? defaultSystemPrompt(cwd, toolNames, now);
  return config.project_instructions === false ? base : withProjectInstructions(base, cwd);
}
