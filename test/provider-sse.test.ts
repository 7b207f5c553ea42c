/** The SSE reader of streamed model replies (src/model/sse.ts): framing edge cases over a real Response. */
import { expect, test } from 'vitest';
import { sseData } from '../src/model/sse.js';

/** A Response whose body arrives in exactly these pieces. */
function responseOf(pieces: string[]): { response: Response; cancelled: () => boolean } {
  const bytes = new TextEncoder();
  let i = 0;
  let cancelled = false;
  const body = new ReadableStream<Uint8Array>({
    pull(controller) {
      if (i < pieces.length) controller.enqueue(bytes.encode(pieces[i++]!));
      else controller.close();
    },
    cancel() {
      cancelled = true;
    },
  });
  return { response: new Response(body), cancelled: () => cancelled };
}

const errorOf = (data: { error?: unknown; message?: unknown }, event: string | null) =>
  new Error(`${event ?? 'data'}: ${JSON.stringify(data.error ?? data.message)}`);

async function collect(pieces: string[]): Promise<unknown[]> {
  const out: unknown[] = [];
  for await (const d of sseData(responseOf(pieces).response, errorOf)) out.push(d);
  return out;
}

test('events split anywhere, CRLF line ends, multi-line data, comments and ids', async () => {
  const text = ': hello\r\nid: 1\r\ndata: {"a":\r\ndata: 1}\r\n\r\ndata:{"b":2}\n\n';
  const pieces = text.split('').reduce<string[]>((acc, ch, i) => (i % 3 === 0 ? [...acc, ch] : [...acc.slice(0, -1), acc.at(-1)! + ch]), []);
  expect(await collect(pieces)).toEqual([{ a: 1 }, { b: 2 }]);
  expect(await collect([text])).toEqual([{ a: 1 }, { b: 2 }]);
});

test('[DONE] ends the data but the body is read to its end (the connection can be reused)', async () => {
  const { response, cancelled } = responseOf(['data: {"x":1}\n\ndata: [DONE]\n\n', 'data: {"late":true}\n\n', 'trailing']);
  const out: unknown[] = [];
  for await (const d of sseData(response, errorOf)) out.push(d);
  expect(out).toEqual([{ x: 1 }]);
  expect(cancelled()).toBe(false);
});

test('an error object in the data, an error event and malformed JSON throw', async () => {
  await expect(collect(['data: {"error":{"message":"boom"}}\n\n'])).rejects.toThrow('data: {"message":"boom"}');
  await expect(collect(['event: error\ndata: {"message":"bad"}\n\n'])).rejects.toThrow('error: "bad"');
  await expect(collect(['data: {"x":\n\n'])).rejects.toThrow(SyntaxError);
});

test('a consumer that stops early cancels the body', async () => {
  const { response, cancelled } = responseOf(['data: {"x":1}\n\n', 'data: {"x":2}\n\n']);
  for await (const _ of sseData(response, errorOf)) break;
  expect(cancelled()).toBe(true);
});
