/** The ACP mapping's pure parts (src/acp/mapping.ts): kinds, titles, locations, prompt blocks, stop reasons, the editor's MCP servers. */
import { describe, expect, it } from 'vitest';
import { mcpServers } from '../src/acp/bridge.js';
import { decisionOf, promptText, PromptContentError, stopReason, toolCallEnd, toolKind, toolLocations, toolTitle } from '../src/acp/mapping.js';

describe('acp mapping', () => {
  it('tool kinds', () => {
    expect(['shell', 'read_file', 'list_dir', 'write_file', 'edit_file', 'glob', 'grep', 'delegate', 'fx__echo'].map(toolKind)).toEqual([
      'execute', 'read', 'read', 'edit', 'edit', 'search', 'search', 'other', 'other',
    ]);
  });

  it('a shell title is the whole command with control characters escaped', () => {
    const cmd = `echo ok\n rm -rf ~ \u001b[2K${'x'.repeat(300)}`;
    const title = toolTitle('shell', { command: cmd });
    expect(title).not.toMatch(/[\u0000-\u001f]/);
    expect(title).toContain('\\n rm -rf ~ \\u001b[2K');
    expect(title.endsWith('x'.repeat(300))).toBe(true);
  });

  it('file tools give locations under the cwd', () => {
    expect(toolLocations('read_file', { path: 'src/a.ts' }, '/w/')).toEqual([{ path: '/w/src/a.ts' }]);
    expect(toolLocations('shell', { command: 'ls' }, '/w')).toEqual([]);
  });

  it('prompt blocks: text joined, links as URIs, embedded text fenced under its URI; images refused', () => {
    expect(
      promptText([
        { type: 'text', text: 'look at' },
        { type: 'resource_link', uri: 'file:///w/a.ts', name: 'a.ts' },
        { type: 'resource', resource: { uri: 'file:///w/b.ts', text: 'const b = 1;' } },
      ]),
    ).toBe('look at\nfile:///w/a.ts\nfile:///w/b.ts\n```\nconst b = 1;\n```');
    expect(() => promptText([{ type: 'image', data: 'AA', mimeType: 'image/png' }])).toThrow(PromptContentError);
    expect(() => promptText([{ type: 'resource', resource: { uri: 'file:///x', blob: 'AA' } }])).toThrow(/binary/);
  });

  it('stop reasons', () => {
    expect(stopReason({ type: 'turn_complete', stop_reason: 'length' } as never)).toEqual({ stop: 'max_tokens' });
    expect(stopReason({ type: 'turn_complete' } as never)).toEqual({ stop: 'end_turn' });
    expect(stopReason({ type: 'turn_interrupted', reason: 'interrupted' })).toEqual({ stop: 'cancelled' });
    expect(stopReason({ type: 'turn_failed', error: { code: 'max_model_steps_exceeded', message: 'm' } })).toEqual({ stop: 'max_turn_requests' });
    expect(stopReason({ type: 'turn_failed', error: { code: 'model_error', message: 'boom' } })).toEqual({ failed: { code: 'model_error', message: 'boom' } });
  });

  it('tool ends: denied and interrupted calls fail with the reason', () => {
    expect(toolCallEnd({ type: 'tool_call_end', call_id: 'c', status: 'denied', output: 'no', duration_ms: 1 })).toMatchObject({
      status: 'failed',
      content: [{ type: 'content', content: { type: 'text', text: 'denied: no' } }],
    });
    expect(toolCallEnd({ type: 'tool_call_end', call_id: 'c', status: 'ok', output: 'fine', duration_ms: 1 }).status).toBe('completed');
  });

  it('permission outcomes', () => {
    expect(decisionOf({ outcome: 'selected', optionId: 'abort' })).toBe('abort');
    expect(decisionOf({ outcome: 'selected', optionId: 'nonsense' })).toBeNull();
    expect(decisionOf({ outcome: 'cancelled' })).toBeNull();
  });

  it("the editor's MCP servers: stdio and HTTP become mcp_servers entries; SSE is refused", () => {
    expect(
      mcpServers([
        { name: 'a', command: 'node', args: ['s.js'], env: [{ name: 'K', value: 'v' }] },
        { type: 'http', name: 'b', url: 'http://127.0.0.1:9/mcp', headers: [{ name: 'H', value: '1' }] },
      ]),
    ).toEqual({ a: { command: 'node', args: ['s.js'], env: { K: 'v' } }, b: { url: 'http://127.0.0.1:9/mcp', headers: { H: '1' } } });
    expect(mcpServers([])).toBeNull();
    expect(() => mcpServers([{ type: 'sse', name: 'c', url: 'http://x', headers: [] }])).toThrow(/SSE/);
  });
});
