/** Helpers for the MCP tests: real reference servers, the misbehaving fixture, a tool context, pid checks. */
import { execFileSync } from 'node:child_process';
import { readFileSync, realpathSync } from 'node:fs';
import { join } from 'node:path';
import { parseMcpServers } from '../../src/mcp/config.js';
import { McpManager, type McpManagerOptions } from '../../src/mcp/manager.js';
import type { McpTool } from '../../src/mcp/toolset.js';
import type { ToolContext } from '../../src/tools/types.js';
import { ROOT } from './daemon.js';
import { cleanup, tempDir } from './session.js';

export const EVERYTHING = join(ROOT, 'node_modules', '@modelcontextprotocol', 'server-everything', 'dist', 'index.js');
export const FILESYSTEM = join(ROOT, 'node_modules', '@modelcontextprotocol', 'server-filesystem', 'dist', 'index.js');
export const FIXTURE = join(ROOT, 'test', 'fixtures', 'mcp-server.mjs');

/** A minimal environment like the shell's (PATH, HOME). */
export const BASE_ENV: Record<string, string> = { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: process.env.HOME ?? '/tmp' };

export function fixtureServer(mode: string, extra: Record<string, unknown> = {}, flags: string[] = []) {
  return { command: process.execPath, args: [FIXTURE, mode, ...flags], ...extra };
}

export function everythingServer(extra: Record<string, unknown> = {}) {
  return { command: process.execPath, args: [EVERYTHING, 'stdio'], ...extra };
}

export function manager(servers: Record<string, unknown>, options: Partial<McpManagerOptions> = {}): McpManager {
  return new McpManager(parseMcpServers(servers), { baseEnv: BASE_ENV, ...options });
}

export function context(cwd: string, signal = new AbortController().signal): ToolContext {
  return { cwd, signal, onOutput: () => {} };
}

export function byName(tools: McpTool[], name: string): McpTool {
  const tool = tools.find((t) => t.spec.name === name);
  if (!tool) throw new Error(`no tool ${name} in ${tools.map((t) => t.spec.name).join(', ')}`);
  return tool;
}

/** Whether `pid` is a live process (a zombie waiting for its reaper counts as gone). */
export function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch {
    return false;
  }
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2)[0] !== 'Z';
  } catch {
    return true; // no /proc: trust kill(0)
  }
}

/** Pids of the processes in process group `pgid` (ps). */
export function groupMembers(pgid: number): number[] {
  const out = execFileSync('ps', ['-e', '-o', 'pid=,pgid=,stat='], { encoding: 'utf8' });
  return out
    .split('\n')
    .map((l) => l.trim().split(/\s+/))
    .filter((f) => f.length >= 3 && Number(f[1]) === pgid && !f[2]!.startsWith('Z'))
    .map((f) => Number(f[0]));
}

export async function waitFor(check: () => boolean, timeoutMs: number, what: string): Promise<void> {
  const until = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > until) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

const workDirs: string[] = [];

/** A fresh temp dir (real path, as servers report their cwd); removeWorkDirs() removes them all. */
export function workDir(): string {
  const d = realpathSync(tempDir('agentd-mcp-'));
  workDirs.push(d);
  return d;
}

export function removeWorkDirs(): void {
  workDirs.splice(0).forEach(cleanup);
}
