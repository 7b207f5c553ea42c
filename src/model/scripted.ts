/**
 * The embedded `scripted` model (runtime.md §4): deterministic and offline, for demos
 * and tests. It reacts to the latest user message:
 *   `!sh CMD`    → calls `shell {command: CMD}`; after the result: `command exited with code N`
 *   `!sleep MS`  → streams `slept` in small deltas spread over MS milliseconds
 *   `!fail`      → the model call fails
 *   `!delegate TASK` → calls `delegate {task: TASK}`; after the result: `subagent: RESULT`
 *   `!mcp TOOL JSON` → calls the tool TOOL (e.g. an MCP `SERVER__TOOL`) with the JSON object
 *                    as arguments; after the result: `tool TOOL answered: RESULT`
 *   anything else → `echo: TEXT` in at least two deltas
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { ModelError, type ContextItem, type ModelChunk, type ModelClient, type ModelRequest } from './types.js';

/** Characters per delta of an echo reply. */
const ECHO_DELTA_CHARS = 8;

let callCounter = 0;

function estimateTokens(text: string): number {
  return Math.ceil(text.length / 4);
}

function contextTokens(context: readonly ContextItem[]): number {
  let n = 0;
  for (const item of context) n += estimateTokens('text' in item ? item.text : item.output);
  return n;
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

async function* reply(text: string, request: ModelRequest): AsyncGenerator<ModelChunk> {
  for (const delta of split(text, ECHO_DELTA_CHARS)) yield { type: 'text_delta', delta };
  yield { type: 'usage', input_tokens: contextTokens(request.context), output_tokens: estimateTokens(text) };
  yield { type: 'finish', reason: 'stop' };
}

async function* scriptedStream(request: ModelRequest): AsyncGenerator<ModelChunk> {
  const context = request.context;
  const last = context[context.length - 1];
  // After a tool result: report how the command ended.
  if (last?.role === 'tool' && last.tool === 'delegate') {
    yield* reply(`subagent: ${last.output}`, request);
    return;
  }
  if (last?.role === 'tool' && last.tool !== 'shell') {
    yield* reply(`tool ${last.tool} answered: ${last.output}`, request);
    return;
  }
  if (last?.role === 'tool') {
    const text =
      typeof last.exit_code === 'number'
        ? `command exited with code ${last.exit_code}`
        : `command did not complete: ${last.output.split('\n')[0]}`;
    yield* reply(text, request);
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
    yield { type: 'usage', input_tokens: contextTokens(context), output_tokens: estimateTokens(command[2]) };
    yield { type: 'finish', reason: 'tool_calls' };
    return;
  }
  if (command?.[1] === 'delegate' && command[2]) {
    yield* callTool('delegate', { task: command[2] }, context);
    return;
  }
  const mcp = command?.[1] === 'mcp' && command[2] ? /^(\S+)(?:\s+([\s\S]*))?$/.exec(command[2]) : null;
  if (mcp) {
    let args: unknown = {};
    try {
      args = mcp[2] ? JSON.parse(mcp[2]) : {};
    } catch {
      /* not JSON: the text itself */
    }
    yield* callTool(mcp[1]!, typeof args === 'object' && args !== null && !Array.isArray(args) ? (args as Record<string, unknown>) : { input: mcp[2] }, context);
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
    yield { type: 'usage', input_tokens: contextTokens(context), output_tokens: 2 };
    yield { type: 'finish', reason: 'stop' };
    return;
  }
  if (command?.[1] === 'fail' && !command[2]) {
    throw new ModelError('scripted_failure', 'the scripted model was asked to fail (!fail)');
  }
  yield* reply(`echo: ${userText}`, request);
}

async function* callTool(tool: string, args: Record<string, unknown>, context: readonly ContextItem[]): AsyncGenerator<ModelChunk> {
  yield { type: 'tool_call', call: { call_id: `call_${Date.now().toString(36)}_${++callCounter}`, tool, arguments: args } };
  yield { type: 'usage', input_tokens: contextTokens(context), output_tokens: estimateTokens(JSON.stringify(args)) };
  yield { type: 'finish', reason: 'tool_calls' };
}

export const scriptedModel: ModelClient = { stream: scriptedStream };
