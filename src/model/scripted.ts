/**
 * The embedded `scripted` model (docs/models.md): deterministic and offline, for demos
 * and tests. It reacts to the latest user message:
 *   `!sh CMD`    → calls `shell {command: CMD}`; after the result: `command exited with code N`
 *   `!sleep MS`  → streams `slept` in small deltas spread over MS milliseconds
 *   `!fail`      → the model call fails
 *   `!say TEXT`  → replies TEXT exactly (e.g. Markdown), in deltas of 8 characters
 *   `!delegate TASK` → calls `delegate {task: TASK}`; after the result: `subagent: RESULT`
 *   `!mcp TOOL JSON` → calls the tool TOOL (e.g. an MCP `SERVER__TOOL`) with the JSON object
 *                    as arguments; after the result: `tool TOOL answered: RESULT`
 *   `!tool TOOL JSON` → the same, for any tool (`!tool edit_file {"path":…}`, `!tool grep {…}`)
 *   `!shells A ;; B ;; …` / `!delegates A ;; B ;; …` → one step with several `shell` /
 *                    `delegate` calls (run in parallel); after them: one line per result, in order
 *   `!system`    → replies with the request's system prompt, verbatim
 *   anything else → `echo: TEXT` in at least two deltas
 * and to a summarization request (the last user message starts with SUMMARIZE_MARKER):
 *   `summary: ` + the first 20 characters of each earlier user message, joined by ` | `.
 * It reports `input_tokens` = UTF-8 bytes of the whole request (system, context, tools as
 * JSON) / 4 and `output_tokens` = its reply's / 4; on a route with `context_window` a
 * request larger than the window fails `context_overflow`, as a real provider would.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { CONTEXT_OVERFLOW, ModelError, SUMMARIZE_MARKER, type ModelChunk, type ModelClient, type ModelRequest } from './types.js';

/** Characters per delta of an echo reply. */
const ECHO_DELTA_CHARS = 8;

let callCounter = 0;

function estimateTokens(text: string): number {
  return Math.ceil(Buffer.byteLength(text, 'utf8') / 4);
}

/**
 * UTF-8 bytes of each context item's and tool spec's JSON, by object. A transcript item is
 * never changed once appended and a tool spec is made once, so a call counts only what is
 * new since the last one instead of serializing the whole history again (a long session's
 * every call did: docs/performance.md, item 14).
 */
const jsonBytes = new WeakMap<object, number>();
let lastSystem: { text: string | null; bytes: number } = { text: null, bytes: 4 };

function bytesOf(value: object): number {
  let bytes = jsonBytes.get(value);
  if (bytes === undefined) {
    bytes = Buffer.byteLength(JSON.stringify(value), 'utf8');
    jsonBytes.set(value, bytes);
  }
  return bytes;
}

/** Bytes of a JSON array of objects: `[`, `]`, the commas and each element. */
function arrayBytes(values: readonly object[]): number {
  let bytes = 2 + Math.max(values.length - 1, 0);
  for (const v of values) bytes += bytesOf(v);
  return bytes;
}

/**
 * Tokens of the whole request: the UTF-8 bytes of `JSON.stringify({system, context, tools})`
 * (system `null` when there is none) / 4, rounded up — summed from its parts.
 */
export function requestTokens(request: Pick<ModelRequest, 'system' | 'context' | 'tools'>): number {
  const system = request.system ?? null;
  if (lastSystem.text !== system) lastSystem = { text: system, bytes: Buffer.byteLength(JSON.stringify(system), 'utf8') };
  const bytes =
    '{"system":'.length + lastSystem.bytes + ',"context":'.length + arrayBytes(request.context) + ',"tools":'.length + arrayBytes(request.tools) + 1;
  return Math.ceil(bytes / 4);
}

/** The deterministic summary (docs/context.md): the first 20 characters of each user message. */
function summaryOf(request: ModelRequest): string {
  const users = request.context.slice(0, -1).flatMap((item) => (item.role === 'user' ? [item.text.slice(0, 20)] : []));
  return `summary: ${users.join(' | ')}`;
}

/** Split text into deltas of at most `size` characters, at least two when possible. */
function split(text: string, size: number): string[] {
  const parts: string[] = [];
  for (let i = 0; i < text.length; i += size) parts.push(text.slice(i, i + size));
  if (parts.length === 1 && text.length > 1) {
    const mid = Math.ceil(text.length / 2);
    return [text.slice(0, mid), text.slice(mid)];
  }
  return parts;
}

/** A text reply; `inputTokens` is the request's count (requestTokens, once per call). */
async function* reply(text: string, inputTokens: number): AsyncGenerator<ModelChunk> {
  for (const delta of split(text, ECHO_DELTA_CHARS)) yield { type: 'text_delta', delta };
  yield { type: 'usage', input_tokens: inputTokens, output_tokens: estimateTokens(text) };
  yield { type: 'finish', reason: 'stop' };
}

async function* scriptedStream(request: ModelRequest): AsyncGenerator<ModelChunk> {
  const context = request.context;
  const window = request.route.context_window;
  const tokens = requestTokens(request);
  if (window !== null && tokens > window) {
    throw new ModelError(CONTEXT_OVERFLOW, `prompt is too long: ${tokens} tokens > ${window} maximum (scripted route "${request.route.route}")`);
  }
  const last = context[context.length - 1];
  if (last?.role === 'user' && last.text.startsWith(SUMMARIZE_MARKER)) {
    yield* reply(summaryOf(request), tokens);
    return;
  }
  // After several results of one step: one line each, in the model's order.
  const results = stepResults(context);
  if (results.length > 1) {
    yield* reply(results.map(resultLine).join('\n'), tokens);
    return;
  }
  // After a tool result: report how the command ended.
  if (last?.role === 'tool' && last.tool === 'delegate') {
    yield* reply(`subagent: ${last.output}`, tokens);
    return;
  }
  if (last?.role === 'tool' && last.tool !== 'shell') {
    yield* reply(`tool ${last.tool} answered: ${last.output}`, tokens);
    return;
  }
  if (last?.role === 'tool') {
    const text =
      typeof last.exit_code === 'number'
        ? `command exited with code ${last.exit_code}`
        : `command did not complete: ${last.output.split('\n')[0]}`;
    yield* reply(text, tokens);
    return;
  }
  let userText = '';
  for (let i = context.length - 1; i >= 0; i--) {
    const item = context[i]!;
    if (item.role === 'user') {
      userText = item.text;
      break;
    }
  }
  const command = /^!(\w+)(?:\s+([\s\S]*))?$/.exec(userText.trim());
  if (command?.[1] === 'sh' && command[2]) {
    yield {
      type: 'tool_call',
      call: { call_id: `call_${Date.now().toString(36)}_${++callCounter}`, tool: 'shell', arguments: { command: command[2] } },
    };
    yield { type: 'usage', input_tokens: tokens, output_tokens: estimateTokens(command[2]) };
    yield { type: 'finish', reason: 'tool_calls' };
    return;
  }
  const several = command?.[1] === 'shells' ? 'shell' : command?.[1] === 'delegates' ? 'delegate' : null;
  if (several && command?.[2]) {
    const parts = command[2].split(';;').map((p) => p.trim()).filter((p) => p.length > 0);
    for (const part of parts) yield { type: 'tool_call', call: { call_id: newCallId(), tool: several, arguments: several === 'shell' ? { command: part } : { task: part } } };
    yield { type: 'usage', input_tokens: tokens, output_tokens: estimateTokens(command[2]) };
    yield { type: 'finish', reason: 'tool_calls' };
    return;
  }
  if (command?.[1] === 'delegate' && command[2]) {
    yield* callTool('delegate', { task: command[2] }, tokens);
    return;
  }
  if (command?.[1] === 'system' && !command[2]) {
    yield* reply(request.system ?? '(no system prompt)', tokens);
    return;
  }
  const mcp = (command?.[1] === 'mcp' || command?.[1] === 'tool') && command[2] ? /^(\S+)(?:\s+([\s\S]*))?$/.exec(command[2]) : null;
  if (mcp) {
    let args: unknown = {};
    try {
      args = mcp[2] ? JSON.parse(mcp[2]) : {};
    } catch {
      /* not JSON: the text itself */
    }
    yield* callTool(mcp[1]!, typeof args === 'object' && args !== null && !Array.isArray(args) ? (args as Record<string, unknown>) : { input: mcp[2] }, tokens);
    return;
  }
  if (command?.[1] === 'sleep' && command[2] && /^\d+$/.test(command[2].trim())) {
    const ms = Number(command[2].trim());
    const letters = ['s', 'l', 'e', 'p', 't'];
    for (const letter of letters) {
      await sleep(ms / letters.length, undefined, { signal: request.signal }).catch(() => {
        throw new ModelError('aborted', 'the model call was aborted');
      });
      yield { type: 'text_delta', delta: letter };
    }
    yield { type: 'usage', input_tokens: tokens, output_tokens: 2 };
    yield { type: 'finish', reason: 'stop' };
    return;
  }
  if (command?.[1] === 'fail' && !command[2]) {
    throw new ModelError('scripted_failure', 'the scripted model was asked to fail (!fail)');
  }
  if (command?.[1] === 'say' && command[2]) {
    yield* reply(command[2], tokens);
    return;
  }
  yield* reply(`echo: ${userText}`, tokens);
}

/** A fresh call id. */
function newCallId(): string {
  return `call_${Date.now().toString(36)}_${++callCounter}`;
}

type ToolItem = Extract<ModelRequest['context'][number], { role: 'tool' }>;

/** The tool results after the last assistant message (the results of its calls). */
function stepResults(context: ModelRequest['context']): ToolItem[] {
  const results: ToolItem[] = [];
  for (let i = context.length - 1; i >= 0 && context[i]!.role === 'tool'; i--) results.unshift(context[i] as ToolItem);
  return results;
}

/** One line for one result of a parallel step. */
function resultLine(item: ToolItem): string {
  if (item.tool === 'delegate') return `subagent: ${item.output}`;
  if (item.tool === 'shell') return typeof item.exit_code === 'number' ? `command exited with code ${item.exit_code}` : `command did not complete: ${item.output.split('\n')[0]}`;
  return `tool ${item.tool} answered: ${item.output}`;
}

async function* callTool(tool: string, args: Record<string, unknown>, inputTokens: number): AsyncGenerator<ModelChunk> {
  yield { type: 'tool_call', call: { call_id: newCallId(), tool, arguments: args } };
  yield { type: 'usage', input_tokens: inputTokens, output_tokens: estimateTokens(JSON.stringify(args)) };
  yield { type: 'finish', reason: 'tool_calls' };
}

export const scriptedModel: ModelClient = { stream: scriptedStream };
