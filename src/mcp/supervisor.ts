/**
 * The stdio server supervisor: a tiny Node.js program (run with `node -e`) that starts
 * the MCP server command with the supervisor's own stdin/stdout/stderr, in the process
 * group the supervisor leads. It exists so that no server outlives the daemon: when its
 * parent (the daemon) goes away — even by kill -9 — it notices within half a second
 * (its parent pid changes) and ends the whole group (TERM, then KILL after 2 s). It never
 * reads stdin or writes stdout, which belong to the server. When the server exits, the
 * supervisor exits with the same code (128 + signal number for a signal), after sending
 * TERM to anything the server left behind in the group.
 */

/** Milliseconds between TERM and KILL, and between parent checks. */
export const SUPERVISOR_GRACE_MS = 2000;
const PARENT_POLL_MS = 500;

/** CommonJS source for `node --input-type=commonjs -e SOURCE -- COMMAND ARGS...` (the flag wins over a NODE_OPTIONS of the server's environment). */
export const SUPERVISOR_SOURCE = `'use strict';
const { spawn } = require('node:child_process');
const { constants } = require('node:os');
const [command, ...args] = process.argv.slice(1);
const owner = process.ppid;
let stopping = false;
const group = (sig) => { try { process.kill(-process.pid, sig); } catch {} };
const stop = () => {
  if (stopping) return;
  stopping = true;
  group('SIGTERM');
  setTimeout(() => group('SIGKILL'), ${SUPERVISOR_GRACE_MS}).unref();
};
for (const sig of ['SIGTERM', 'SIGINT', 'SIGHUP']) process.on(sig, stop);
const child = spawn(command, args, { stdio: 'inherit' });
child.on('error', (err) => {
  process.stderr.write('cannot start "' + command + '": ' + err.message + '\\n');
  process.exit(127);
});
child.on('exit', (code, signal) => {
  stopping = true;
  group('SIGTERM');
  process.exit(code ?? 128 + (constants.signals[signal] ?? 0));
});
setInterval(() => { if (process.ppid !== owner) stop(); }, ${PARENT_POLL_MS});
`;
