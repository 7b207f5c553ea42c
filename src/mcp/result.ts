/**
 * An MCP `tools/call` result as a ToolResult: text content joined (one block per line),
 * images, audio and embedded resources replaced by a placeholder naming the MIME type and
 * the size in bytes (`[image/png, 1234 bytes]`), resource links by their URI; `isError`
 * gives status `error`. Structured content is used only when there is no content. Output
 * over the cap is cut with a note.
 */
import type { CallToolResult, ContentBlock } from '@modelcontextprotocol/sdk/types.js';
import type { ToolResult } from '../tools/types.js';

/** Bytes of a base64 payload once decoded (no decoding needed). */
function decodedSize(base64: string): number {
  return Buffer.byteLength(base64, 'base64');
}

function placeholder(mime: string | undefined, bytes: number, uri?: string): string {
  return `[${mime ?? 'application/octet-stream'}, ${bytes} bytes${uri !== undefined ? `: ${uri}` : ''}]`;
}

export function contentText(block: ContentBlock): string {
  switch (block.type) {
    case 'text':
      return block.text;
    case 'image':
    case 'audio':
      return placeholder(block.mimeType, decodedSize(block.data));
    case 'resource': {
      const r = block.resource;
      if ('blob' in r) return placeholder(r.mimeType, decodedSize(r.blob), r.uri);
      return placeholder(r.mimeType ?? 'text/plain', Buffer.byteLength(r.text, 'utf8'), r.uri);
    }
    case 'resource_link':
      return `[resource link: ${block.uri}${block.mimeType ? `, ${block.mimeType}` : ''}]`;
    default:
      return `[unsupported content: ${(block as { type?: unknown }).type}]`;
  }
}

/** The result as a ToolResult; output beyond `capBytes` (UTF-8) is cut with a note, like the shell's. */
export function convertResult(result: CallToolResult, capBytes = Number.POSITIVE_INFINITY): ToolResult {
  const blocks = result.content ?? [];
  let output = blocks.map(contentText).join('\n');
  if (blocks.length === 0 && result.structuredContent !== undefined) output = JSON.stringify(result.structuredContent);
  return { status: result.isError === true ? 'error' : 'ok', output: capOutput(output, capBytes) };
}

function capOutput(output: string, capBytes: number): string {
  if (output.length <= capBytes / 3 || Buffer.byteLength(output, 'utf8') <= capBytes) return output;
  // Cut on a character boundary: a partial sequence at the end decodes to U+FFFD, dropped.
  const kept = Buffer.from(output, 'utf8').subarray(0, capBytes).toString('utf8').replace(/\uFFFD+$/, '');
  return `${kept}\n[output truncated: more than ${capBytes} bytes]`;
}
