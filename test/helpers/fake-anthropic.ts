/**
 * A real HTTP server (127.0.0.1, ephemeral port) speaking Anthropic's streaming Messages
 * SSE protocol (`event: NAME` + `data: JSON`), scripted per request. The server and the
 * plain-status answers are fake-openai's; only the event stream differs.
 */
import type { ServerResponse } from 'node:http';
import { startFakeOpenAI, startSse, type FakeOpenAI, type Handler } from './fake-openai.js';

export { status } from './fake-openai.js';

/** `baseURL` is the API root without `/v1` (the Anthropic SDK appends `/v1/messages`). */
export type FakeAnthropic = FakeOpenAI;

export async function startFakeAnthropic(): Promise<FakeAnthropic> {
  const server = await startFakeOpenAI();
  return Object.assign(server, { baseURL: server.baseURL.replace(/\/v1$/, '') });
}

/** One SSE event: `type` names it, as Anthropic's stream does. */
type StreamEvent = { type: string } & Record<string, unknown>;

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

function write(res: ServerResponse, events: StreamEvent[]): void {
  for (const e of events) res.write(`event: ${e.type}\ndata: ${JSON.stringify(e)}\n\n`);
}

/** Streams `events`, then ends the response. */
export function events(list: StreamEvent[], opts: { delayMs?: number } = {}): Handler {
  return async (_req, res) => {
    startSse(res);
    for (const e of list) {
      write(res, [e]);
      if (opts.delayMs) await sleep(opts.delayMs);
    }
    res.end();
  };
}

/** Streams `events`, then keeps the response open (until the client goes away). */
export function eventsThenHang(list: StreamEvent[]): Handler {
  return (_req, res) => {
    startSse(res);
    write(res, list);
  };
}

/** Streams `events`, then drops the connection without finishing. */
export function eventsThenDrop(list: StreamEvent[]): Handler {
  return async (_req, res) => {
    startSse(res);
    write(res, list);
    await sleep(20);
    res.socket?.destroy();
  };
}

let n = 0;

/** Builders of Anthropic stream events. */
export const ev = {
  start: (usage: Record<string, number> = { input_tokens: 10, output_tokens: 1 }) => ({
    type: 'message_start',
    message: {
      id: `msg_${++n}`,
      type: 'message',
      role: 'assistant',
      model: 'fake-claude',
      content: [],
      stop_reason: null,
      stop_sequence: null,
      usage: { cache_creation_input_tokens: 0, cache_read_input_tokens: 0, ...usage },
    },
  }),
  textStart: (index: number) => ({ type: 'content_block_start', index, content_block: { type: 'text', text: '' } }),
  text: (index: number, text: string) => ({ type: 'content_block_delta', index, delta: { type: 'text_delta', text } }),
  thinkingStart: (index: number) => ({ type: 'content_block_start', index, content_block: { type: 'thinking', thinking: '', signature: '' } }),
  thinking: (index: number, thinking: string) => ({ type: 'content_block_delta', index, delta: { type: 'thinking_delta', thinking } }),
  signature: (index: number, signature: string) => ({ type: 'content_block_delta', index, delta: { type: 'signature_delta', signature } }),
  redacted: (index: number, data: string) => ({ type: 'content_block_start', index, content_block: { type: 'redacted_thinking', data } }),
  toolStart: (index: number, id: string, name: string) => ({ type: 'content_block_start', index, content_block: { type: 'tool_use', id, name, input: {} } }),
  json: (index: number, partial_json: string) => ({ type: 'content_block_delta', index, delta: { type: 'input_json_delta', partial_json } }),
  stop: (index: number) => ({ type: 'content_block_stop', index }),
  delta: (stop_reason: string, usage: Record<string, unknown> = { output_tokens: 5 }) => ({
    type: 'message_delta',
    delta: { stop_reason, stop_sequence: null },
    usage,
  }),
  messageStop: () => ({ type: 'message_stop' }),
  ping: () => ({ type: 'ping' }),
  error: (type: string, message: string) => ({ type: 'error', error: { type, message } }),
  /** A whole text block: start, one delta per part, stop. */
  textBlock: (index: number, ...parts: string[]) => [ev.textStart(index), ...parts.map((p) => ev.text(index, p)), ev.stop(index)],
  /** A whole thinking block: start, thinking deltas, signature deltas, stop. */
  thinkingBlock: (index: number, thinking: string[], signature: string[]) => [
    ev.thinkingStart(index),
    ...thinking.map((t) => ev.thinking(index, t)),
    ...signature.map((s) => ev.signature(index, s)),
    ev.stop(index),
  ],
  /** A whole tool_use block: start, one input_json_delta per fragment, stop. */
  toolBlock: (index: number, id: string, name: string, ...fragments: string[]) => [ev.toolStart(index, id, name), ...fragments.map((f) => ev.json(index, f)), ev.stop(index)],
};

/** A whole text reply: start, one text block in `parts`, stop reason, stop. */
export function textReply(parts: string[], stopReason = 'end_turn'): StreamEvent[] {
  return [ev.start(), ...ev.textBlock(0, ...parts), ev.delta(stopReason), ev.messageStop()];
}
