/**
 * Reading Linux /proc for the shell's process containment: which processes exist, their
 * parent, process group and session, and whether their initial environment carries a marker.
 */
import { readdirSync, readFileSync } from 'node:fs';

export interface ProcInfo {
  pid: number;
  /** R, S, D, Z (zombie: exited, not yet reaped), ... */
  state: string;
  ppid: number;
  pgrp: number;
  session: number;
}

/** One process's ids from /proc/PID/stat, or null when it is gone. */
export function procInfo(pid: number): ProcInfo | null {
  let stat: string;
  try {
    stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  } catch {
    return null;
  }
  // "pid (comm) state ppid pgrp session ..."; comm may contain spaces and parentheses.
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return { pid, state: fields[0]!, ppid: Number(fields[1]), pgrp: Number(fields[2]), session: Number(fields[3]) };
}

/** Every process visible in /proc now (a process may be gone by the time it is used). */
export function listProcesses(): ProcInfo[] {
  let names: string[];
  try {
    names = readdirSync('/proc');
  } catch {
    return [];
  }
  const out: ProcInfo[] = [];
  for (const name of names) {
    const pid = Number(name);
    if (!Number.isInteger(pid) || pid <= 0) continue;
    const info = procInfo(pid);
    if (info) out.push(info);
  }
  return out;
}

/** True when /proc/PID/environ (the environment the process was exec'd with) holds `entry` (NAME=VALUE). */
export function environHas(pid: number, entry: string): boolean {
  let env: Buffer;
  try {
    env = readFileSync(`/proc/${pid}/environ`);
  } catch {
    return false;
  }
  const first = Buffer.from(`${entry}\0`);
  return env.subarray(0, first.length).equals(first) || env.includes(Buffer.from(`\0${entry}\0`));
}

/** Send `signal` to `pid`; false when it no longer exists (or is not ours). */
export function signalPid(pid: number, signal: NodeJS.Signals): boolean {
  try {
    process.kill(pid, signal);
    return true;
  } catch {
    return false;
  }
}
