/**
 * Process containment for shell calls: every process a call starts — also one that left
 * the process group (setsid, double fork, nohup) — can be signalled and killed.
 *
 * - `cgroup` (preferred): each call runs in its own cgroup v2 below the daemon's, which no
 *   descendant can leave; TERM goes to every member, `cgroup.kill` kills them all at once.
 *   Used when the daemon may create cgroups there (root, or a delegated subtree).
 * - `process-tree` (fallback): members are found through /proc — the call's process group
 *   and session, the descendants of those by parent pid, and every process whose initial
 *   environment carries the call's marker variable. Limit: a process that left the session,
 *   lost its parent and was exec'd with an environment without the marker escapes.
 *
 * Whether cgroups work is probed with a real shell once per process and cgroup, and the
 * verdict kept: spawning forks the daemon, and after a fork every page the daemon writes
 * costs a copy-on-write fault, so a probe per session host made each in-process host (tests,
 * benchmarks) pay for the whole process's memory again (docs/performance.md, item 13).
 */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync, rmdirSync, writeFileSync, type Dirent } from 'node:fs';
import { join } from 'node:path';
import { environHas, listProcesses, signalPid } from './procfs.js';

export type ContainmentKind = 'cgroup' | 'process-tree';

/** One shell call's processes. */
export interface Contained {
  /** What to spawn (detached) and the extra environment it needs. */
  readonly file: string;
  readonly args: readonly string[];
  readonly env: Readonly<Record<string, string>>;
  /** The spawned process's pid, once known. */
  attach(pid: number): void;
  /** Signal every process of the call. */
  signal(signal: 'SIGTERM' | 'SIGKILL'): void;
  /** Kill whatever is left, wait (bounded) until nothing is, release what the call held. */
  reap(): Promise<void>;
}

export interface Containment {
  readonly kind: ContainmentKind;
  contain(command: string): Contained;
  /** Release the containment's own resources (after every call was reaped). */
  dispose(): void;
}

const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));
/** How long reap() waits for the last processes to be gone. */
const REAP_WAIT_MS = 3000;

let sequence = 0;

// ---- cgroup v2 ---------------------------------------------------------------------------

/** The daemon's own cgroup v2 directory, or null when there is none. */
export function ownCgroupDir(): string | null {
  try {
    const line = readFileSync('/proc/self/cgroup', 'utf8').split('\n').find((l) => l.startsWith('0::'));
    if (!line) return null;
    const mount = readFileSync('/proc/self/mountinfo', 'utf8')
      .split('\n')
      .map((l) => l.split(' '))
      .find((f) => f[f.indexOf('-') + 1] === 'cgroup2');
    if (!mount) return null;
    return join(mount[4]!, line.slice(3));
  } catch {
    return null;
  }
}

function readPids(dir: string): number[] {
  try {
    return readFileSync(join(dir, 'cgroup.procs'), 'utf8').split('\n').filter(Boolean).map(Number);
  } catch {
    return [];
  }
}

function populated(dir: string): boolean {
  try {
    return /^populated 1$/m.test(readFileSync(join(dir, 'cgroup.events'), 'utf8'));
  } catch {
    return false;
  }
}

function kill(dir: string): void {
  try {
    writeFileSync(join(dir, 'cgroup.kill'), '1');
  } catch {
    /* removed already */
  }
}

/**
 * Kill and remove the call cgroups of daemons that died without cleaning up (kill -9).
 * Best effort: an entry that vanishes or cannot be read meanwhile is skipped, never fatal.
 */
export function reapStale(base: string): void {
  let names: string[] = [];
  try {
    names = readdirSync(base);
  } catch {
    return;
  }
  for (const name of names) {
    const m = /^agentd-(\d+)-\d+$/.exec(name);
    if (!m || existsSync(`/proc/${m[1]}`)) continue;
    const parent = join(base, name);
    let calls: Dirent[];
    try {
      calls = readdirSync(parent, { withFileTypes: true });
    } catch {
      continue; // removed meanwhile (another daemon reaped it, or its owner cleaned up)
    }
    for (const call of calls) {
      if (!call.isDirectory()) continue;
      kill(join(parent, call.name));
      try {
        rmdirSync(join(parent, call.name));
      } catch {
        /* still emptying; the next start removes it */
      }
    }
    try {
      rmdirSync(parent);
    } catch {
      /* not empty yet */
    }
  }
}

/** Per cgroup directory: whether a shell could move itself into a cgroup made below it (this process's probes). */
const probed = new Map<string, boolean>();

/** The real thing, below `parent`: a shell moving itself into a child cgroup (removed again). */
function probeCgroups(parent: string): boolean {
  const probe = join(parent, 'probe');
  mkdirSync(probe);
  try {
    const r = spawnSync('/bin/sh', ['-c', 'echo 0 > "$1/cgroup.procs"', 'agentd-probe', probe], { stdio: 'ignore' });
    return r.status === 0 && existsSync(join(probe, 'cgroup.kill'));
  } finally {
    rmdirSync(probe);
  }
}

/**
 * A cgroup containment below the daemon's cgroup, or null when it cannot work here. The
 * first call per process probes with a shell; later calls (more session hosts in one
 * process) reuse that verdict and spawn nothing.
 */
export function cgroupContainment(): Containment | null {
  const base = ownCgroupDir();
  if (!base || !existsSync(join(base, 'cgroup.procs'))) return null;
  reapStale(base);
  if (probed.get(base) === false) return null;
  const parent = join(base, `agentd-${process.pid}-${++sequence}`);
  try {
    mkdirSync(parent, { recursive: true });
    let works = probed.get(base);
    if (works === undefined) {
      works = probeCgroups(parent);
      probed.set(base, works);
    }
    if (!works) {
      rmdirSync(parent);
      return null;
    }
  } catch {
    // No verdict (a directory could not be made or removed): the next host probes again.
    try {
      if (existsSync(parent)) rmdirSync(parent);
    } catch {
      /* nothing more to do */
    }
    return null;
  }
  let calls = 0;
  return {
    kind: 'cgroup',
    contain(command) {
      const dir = join(parent, `call-${++calls}`);
      mkdirSync(dir);
      return {
        file: '/bin/sh',
        // The shell moves itself into the call's cgroup before it runs anything.
        args: ['-c', 'echo 0 > "$1/cgroup.procs" || exit 126; exec /bin/sh -c "$2"', 'agentd-shell', dir, command],
        env: {},
        attach() {},
        signal(signal) {
          if (signal === 'SIGKILL') kill(dir);
          else for (const pid of readPids(dir)) signalPid(pid, signal);
        },
        async reap() {
          const until = Date.now() + REAP_WAIT_MS;
          kill(dir);
          while (populated(dir) && Date.now() < until) await sleep(5);
          try {
            rmdirSync(dir);
          } catch {
            /* a straggler; the cgroup stays until the next start reaps it */
          }
        },
      };
    },
    dispose() {
      try {
        rmdirSync(parent);
      } catch {
        /* a call cgroup is still there */
      }
    },
  };
}

// ---- process tree through /proc ----------------------------------------------------------

/** The processes of the call started as `root` (pid = pgid = sid after setsid), found via /proc. */
function members(root: number, marker: string): number[] {
  const all = listProcesses();
  const found = new Set<number>();
  for (const p of all) {
    if (p.pid === process.pid || p.state === 'Z' || p.state === 'X') continue;
    if (p.pid === root || p.pgrp === root || p.session === root || environHas(p.pid, marker)) found.add(p.pid);
  }
  // Descendants by parent pid (until no more are added).
  for (let grew = true; grew; ) {
    grew = false;
    for (const p of all) {
      if (!found.has(p.pid) && found.has(p.ppid) && p.pid !== process.pid && p.state !== 'Z') {
        found.add(p.pid);
        grew = true;
      }
    }
  }
  return [...found];
}

/** The /proc fallback (always available on Linux). */
export function processTreeContainment(): Containment {
  return {
    kind: 'process-tree',
    contain(command) {
      const name = 'AGENTD_SHELL_CALL';
      const value = `${process.pid}-${++sequence}-${Date.now()}`;
      const marker = `${name}=${value}`;
      let root = 0;
      return {
        file: '/bin/sh',
        args: ['-c', command],
        env: { [name]: value },
        attach(pid) {
          root = pid;
        },
        signal(signal) {
          if (root) for (const pid of members(root, marker)) signalPid(pid, signal);
        },
        async reap() {
          if (!root) return;
          const until = Date.now() + REAP_WAIT_MS;
          // Repeat: a process may fork while its relatives are being killed.
          for (;;) {
            const left = members(root, marker).filter((pid) => signalPid(pid, 'SIGKILL'));
            if (left.length === 0 || Date.now() >= until) return;
            await sleep(10);
          }
        },
      };
    },
    dispose() {},
  };
}

/** The best containment available here: cgroup, else the process tree. */
export function detectContainment(): Containment {
  return cgroupContainment() ?? processTreeContainment();
}
