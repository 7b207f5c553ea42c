/** The MCP module's pure parts: the mcp_servers schema, tool naming, result conversion. */
import { describe, expect, test } from 'vitest';
import { z } from 'zod';
import { McpConfigError, McpServersSchema, parseMcpServers } from '../src/mcp/config.js';
import { exposedNames, MAX_TOOL_NAME, sanitizeName } from '../src/mcp/naming.js';
import { convertResult } from '../src/mcp/result.js';
import { mustAsk } from '../src/mcp/toolset.js';
import { boundListing, MAX_SCHEMA_DEPTH, nestsDeeperThan } from '../src/mcp/limits.js';
import { ConfigError, parseConfig } from '../src/config/config.js';

function configError(raw: unknown): string {
  try {
    parseMcpServers(raw);
  } catch (err) {
    expect(err).toBeInstanceOf(McpConfigError);
    return (err as Error).message;
  }
  throw new Error('expected a McpConfigError');
}

describe('mcp_servers schema', () => {
  test('stdio and http entries with defaults', () => {
    const servers = parseMcpServers({
      fs: { command: 'npx', args: ['-y', 'x'], env: { A: '1' }, approval: 'auto', tools: ['read_file'] },
      web: { url: 'https://example.com/mcp', headers: { Authorization: 'Bearer t' }, tool_timeout_ms: 5000 },
    });
    expect(servers.fs).toEqual({
      name: 'fs', transport: 'stdio', command: 'npx', args: ['-y', 'x'], env: { A: '1' }, approval: 'auto', tools: ['read_file'],
      startup_timeout_ms: 10_000, tool_timeout_ms: 120_000,
    });
    expect(servers.web).toEqual({
      name: 'web', transport: 'http', url: 'https://example.com/mcp', headers: { Authorization: 'Bearer t' }, approval: 'session',
      startup_timeout_ms: 10_000, tool_timeout_ms: 5000,
    });
    expect(parseMcpServers(undefined)).toEqual({});
  });

  test('fits into the config file schema with one line', () => {
    const Config = z.strictObject({ approval_policy: z.enum(['ask', 'auto']).default('ask'), mcp_servers: McpServersSchema });
    expect(Config.parse({})).toEqual({ approval_policy: 'ask', mcp_servers: {} });
    expect(Config.parse({ mcp_servers: { a: { url: 'http://127.0.0.1:1/mcp' } } }).mcp_servers.a).toMatchObject({ transport: 'http', approval: 'session' });
    const bad = Config.safeParse({ mcp_servers: { a: { command: '' } } });
    expect(bad.success).toBe(false);
    expect(bad.error!.issues[0]).toMatchObject({ path: ['mcp_servers', 'a', 'command'], message: 'must be a non-empty string' });
  });

  test('clear errors naming the field', () => {
    expect(configError({ a: {} })).toBe('mcp_servers.a: exactly one of "command" (stdio) or "url" (Streamable HTTP) is required');
    expect(configError({ a: { command: 'x', url: 'http://h/' } })).toMatch(/^mcp_servers\.a: exactly one of/);
    expect(configError({ a: { url: 'ftp://h/' } })).toBe('mcp_servers.a.url: must be an http:// or https:// URL');
    expect(configError({ a: { url: 'http://h/', args: [] } })).toBe('mcp_servers.a.args: "args" applies to a stdio server ("command"), not to "url"');
    expect(configError({ a: { command: 'x', headers: {} } })).toMatch(/^mcp_servers\.a\.headers: /);
    expect(configError({ a: { command: 'x', approval: 'never' } })).toMatch(/^mcp_servers\.a\.approval: /);
    expect(configError({ a: { command: 'x', startup_timeout_ms: 0 } })).toMatch(/^mcp_servers\.a\.startup_timeout_ms: /);
    expect(configError({ a: { command: 'x', bogus: 1 } })).toMatch(/^mcp_servers\.a: .*bogus/);
    expect(configError({ 'my.srv': { command: 'x' }, my_srv: { command: 'y' } })).toBe('mcp_servers.my_srv: server names "my.srv" and "my_srv" both become "my_srv" in tool names');
    expect(configError({ 'a__b': { command: 'x' } })).toMatch(/must not contain "__"/);
    expect(configError({ ['x'.repeat(33)]: { command: 'x' } })).toBe(`mcp_servers.${'x'.repeat(33)}: server names are 1–32 characters`);
  });
});

describe('tool naming', () => {
  test('SERVER__TOOL, sanitized', () => {
    expect(sanitizeName('a.b/c d-e_f')).toBe('a_b_c_d-e_f');
    const { named } = exposedNames('my.srv', ['echo', 'get-sum', 'x.y']);
    expect(named).toEqual([
      { remote: 'echo', exposed: 'my_srv__echo' },
      { remote: 'get-sum', exposed: 'my_srv__get-sum' },
      { remote: 'x.y', exposed: 'my_srv__x_y' },
    ]);
  });

  test('too long: truncated to 64 with a stable hash; collisions resolved deterministically', () => {
    const long = 'a_tool_with_a_really_long_name_that_does_not_fit_into_sixty_four_characters_at_all';
    const other = `${long}_too`;
    const first = exposedNames('srv', [long, other]).named;
    expect(first.map((n) => n.exposed.length)).toEqual([MAX_TOOL_NAME, MAX_TOOL_NAME]);
    expect(first[0]!.exposed).toMatch(new RegExp(`^srv__${long.slice(0, 64 - 5 - 9)}_[0-9a-f]{8}$`));
    expect(first[0]!.exposed).not.toBe(first[1]!.exposed);
    // The same name whatever else is listed, and in any order.
    expect(exposedNames('srv', [other, 'echo', long]).named.find((n) => n.remote === long)!.exposed).toBe(first[0]!.exposed);

    // Sanitizing collision: the plain valid name keeps its name, the other is hashed.
    const { named, dropped } = exposedNames('srv', ['odd.name', 'odd_name']);
    expect(dropped).toEqual([]);
    expect(named.find((n) => n.remote === 'odd_name')!.exposed).toBe('srv__odd_name');
    expect(named.find((n) => n.remote === 'odd.name')!.exposed).toMatch(/^srv__odd_name_[0-9a-f]{8}$/);
    // A duplicate listing of one name is dropped.
    expect(exposedNames('srv', ['echo', 'echo']).dropped).toEqual(['echo']);
  });
});

describe('result conversion', () => {
  test('text joined; media and resources as placeholders; isError', () => {
    const png = Buffer.alloc(1234, 1).toString('base64');
    const result = convertResult({
      content: [
        { type: 'text', text: 'one' },
        { type: 'image', data: png, mimeType: 'image/png' },
        { type: 'audio', data: Buffer.alloc(3).toString('base64'), mimeType: 'audio/wav' },
        { type: 'resource', resource: { uri: 'file:///a', text: 'héllo' } },
        { type: 'resource', resource: { uri: 'file:///b', blob: Buffer.alloc(7).toString('base64'), mimeType: 'application/zip' } },
        { type: 'resource_link', uri: 'file:///c', name: 'c', mimeType: 'text/csv' },
        { type: 'text', text: 'two' },
      ],
    });
    expect(result).toEqual({
      status: 'ok',
      output: 'one\n[image/png, 1234 bytes]\n[audio/wav, 3 bytes]\n[text/plain, 6 bytes: file:///a]\n[application/zip, 7 bytes: file:///b]\n[resource link: file:///c, text/csv]\ntwo',
    });
    expect(convertResult({ content: [{ type: 'text', text: 'bad' }], isError: true })).toEqual({ status: 'error', output: 'bad' });
    expect(convertResult({ content: [], structuredContent: { sum: 3 } })).toEqual({ status: 'ok', output: '{"sum":3}' });
    // Over the cap: cut on a character boundary, with the shell's note.
    expect(convertResult({ content: [{ type: 'text', text: 'ab€cd' }] }, 4)).toEqual({ status: 'ok', output: 'ab\n[output truncated: more than 4 bytes]' });
    expect(convertResult({ content: [{ type: 'text', text: 'ab€' }] }, 5)).toEqual({ status: 'ok', output: 'ab€' });
  });

  test('approval tri-state', () => {
    expect([mustAsk({ approval: 'ask' }, 'auto'), mustAsk({ approval: 'ask' }, 'ask')]).toEqual([true, true]);
    expect([mustAsk({ approval: 'auto' }, 'auto'), mustAsk({ approval: 'auto' }, 'ask')]).toEqual([false, false]);
    expect([mustAsk({ approval: 'session' }, 'auto'), mustAsk({ approval: 'session' }, 'ask')]).toEqual([false, true]);
  });
});

describe('MCP input bounds (src/mcp/limits.ts)', () => {
  const nest = (levels: number) => {
    let schema: Record<string, unknown> = { type: 'string' };
    for (let i = 1; i < levels; i++) schema = { type: 'object', properties: { a: schema } };
    return schema;
  };

  test('depth is measured without recursion: 64 levels pass, 65 and 100 000 do not', () => {
    // nest(n) has n levels of objects counting the `properties` objects: 2n - 1.
    expect(nestsDeeperThan({ a: { b: {} } }, 3)).toBe(false);
    expect(nestsDeeperThan({ a: { b: {} } }, 2)).toBe(true);
    expect(nestsDeeperThan([[[[1]]]], 4)).toBe(false);
    expect(nestsDeeperThan([[[[1]]]], 3)).toBe(true);
    expect(nestsDeeperThan(nest(50_000), MAX_SCHEMA_DEPTH)).toBe(true);
    expect(nestsDeeperThan(nest(32), MAX_SCHEMA_DEPTH)).toBe(false);
  });

  test('a listing keeps its first max_tools tools and names the deep ones', () => {
    const tools = Array.from({ length: 200_000 }, (_, i) => ({ name: `t${i}`, inputSchema: i === 1 ? nest(100) : { type: 'object' } }));
    const { tools: kept, refused } = boundListing(tools as never, { max_tools: 512, max_message_bytes: 1 << 20 });
    expect(kept).toHaveLength(511);
    expect(kept[0]!.name).toBe('t0');
    expect(kept[510]!.name).toBe('t511');
    expect(refused[0]).toEqual({ name: 't1', reason: 'its inputSchema nests deeper than 64 levels' });
    expect(refused[1]!.reason).toMatch(/more than mcp.max_tools \(512\) tools \(200000 read\)/);
  });

  test('the mcp config block: defaults and validation', () => {
    expect(parseConfig({}).mcp).toEqual({ max_tools: 512, max_message_bytes: 16 * 1024 * 1024 });
    expect(() => parseConfig({ mcp: { max_tools: 0 } })).toThrow(ConfigError);
    expect(() => parseConfig({ mcp: { max_message_bytes: 2 ** 40 } })).toThrow(/mcp.max_message_bytes/);
    expect(() => parseConfig({ mcp: { other: 1 } })).toThrow(ConfigError);
  });
});
