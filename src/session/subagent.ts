/**
 * Subagents (docs/tools.md): the built-in `delegate {task, route?, title?}` tool and the
 * port it runs through. The tool never sees the host: it asks its `SubagentPort` to start
 * (or, after a restart, find) the child session of its call and to wait for the child's
 * turn, and turns the outcome into the call's result. The child's id and the id of the
 * message that starts its turn are derived from the parent's session, turn and call ids, so a
 * call run again after a restart finds the same child and its message is admitted once.
 */
import { createHash } from 'node:crypto';
import type { ApprovalPolicy, SessionMcpServers, SubagentStatus } from '../../protocol/index.js';
import type { Tool, ToolContext, ToolResult } from '../tools/types.js';

export const DELEGATE_TOOL = 'delegate';

/** What the parent tells the port about itself when its call starts a child. */
export interface SubagentParent {
  session_id: string;
  /** The parent's turn making the call (with `call_id`, the child's identity); null outside a turn. */
  turn_id: string | null;
  call_id: string;
  cwd: string;
  approval_policy: ApprovalPolicy;
  route: string;
  /** The parent's own depth (0 for a root session). */
  depth: number;
  /** The parent's own MCP servers (`create_session.config.mcp_servers`): its children have them too. */
  mcp_servers?: SessionMcpServers;
}

export interface SubagentRequest {
  task: string;
  route?: string;
  title?: string;
}

/** How a child's turn ended. */
export interface SubagentOutcome {
  status: SubagentStatus;
  /** `last_message` of a complete turn; the reason of a failed or interrupted one. */
  text: string;
}

/** A failure to start a child, as a value. */
export type SubagentStart = { ok: true; child_session_id: string; submission_id: string } | { ok: false; message: string };

/** What `delegate` needs of the host: start or find the child, wait for its turn. */
export interface SubagentPort {
  /** Create the child (once per parent call) and submit the task as its first message (admitted once). */
  start(parent: SubagentParent, request: SubagentRequest): Promise<SubagentStart>;
  /** Resolves when the child's turn of `submissionId` ends; when `signal` aborts, interrupts that turn and resolves. */
  wait(childSessionId: string, submissionId: string, signal: AbortSignal): Promise<SubagentOutcome | null>;
}

/** A deterministic identifier for (parent session, call): the child's id and its message id. */
/** Every subagent child's session id starts with this. */
export const CHILD_SESSION_PREFIX = 's_sub_';

export function childIds(parentSessionId: string, turnId: string | null, callId: string): { child_session_id: string; submission_id: string } {
  // The turn too: a model reusing a call id in a later turn starts a new child.
  const digest = createHash('sha256').update(`${parentSessionId}\0${turnId ?? ''}\0${callId}`).digest('hex').slice(0, 20);
  return { child_session_id: `${CHILD_SESSION_PREFIX}${digest}`, submission_id: `delegate_${digest}` };
}

/** The result the parent's call gets for a child's outcome. */
export function outcomeResult(child: string, outcome: SubagentOutcome): ToolResult {
  const subagent = { child_session_id: child, status: outcome.status };
  switch (outcome.status) {
    case 'complete':
      return { status: 'ok', output: outcome.text, subagent };
    case 'failed':
      return { status: 'error', output: `the subagent (session ${child}) failed: ${outcome.text}`, subagent };
    case 'interrupted':
      return { status: 'error', output: `the subagent (session ${child}) was interrupted: ${outcome.text}`, subagent };
  }
}

const PARAMETERS = {
  type: 'object',
  properties: {
    task: { type: 'string', description: 'What the subagent should do; its first message.' },
    route: { type: 'string', description: 'Model route of the subagent (default: this session’s).' },
    title: { type: 'string', description: 'A title for the subagent’s session.' },
  },
  required: ['task'],
  additionalProperties: false,
};

function parseRequest(args: Record<string, unknown>): SubagentRequest | string {
  const { task, route, title } = args;
  if (typeof task !== 'string' || task.trim() === '') return 'delegate: "task" must be a non-empty string';
  if (route !== undefined && typeof route !== 'string') return 'delegate: "route" must be a string';
  if (title !== undefined && typeof title !== 'string') return 'delegate: "title" must be a string';
  const extra = Object.keys(args).filter((k) => !['task', 'route', 'title'].includes(k));
  if (extra.length > 0) return `delegate: unknown argument "${extra[0]}" (arguments: task, route, title)`;
  return { task, ...(route !== undefined && { route }), ...(title !== undefined && { title }) };
}

/**
 * The `delegate` tool of one session. `parent()` reads the session as it is when a call
 * runs (cwd, policy, route, depth); `maxDepth` is `limits.max_subagent_depth`.
 */
export function createDelegateTool(port: SubagentPort, parent: () => Omit<SubagentParent, 'call_id'>, maxDepth: number): Tool {
  return {
    spec: {
      name: DELEGATE_TOOL,
      description:
        'Start a subagent: a new session in this working directory that works on `task` on its own and answers with its final message.',
      parameters: PARAMETERS,
    },
    needsApproval: false,
    async run(args: Record<string, unknown>, ctx: ToolContext): Promise<ToolResult> {
      const request = parseRequest(args);
      if (typeof request === 'string') return { status: 'error', output: request };
      const self = parent();
      if (self.depth >= maxDepth) {
        return { status: 'error', output: `delegate: the subagent depth limit (${maxDepth}) is reached; do the task yourself` };
      }
      if (!ctx.callId) return { status: 'error', output: 'delegate: no call id' };
      const started = await port.start({ ...self, call_id: ctx.callId }, request);
      if (!started.ok) return { status: 'error', output: `delegate: ${started.message}` };
      ctx.onSubagent?.(started.child_session_id);
      const outcome = await port.wait(started.child_session_id, started.submission_id, ctx.signal);
      if (!outcome) return { status: 'error', output: 'interrupted', subagent: { child_session_id: started.child_session_id, status: 'interrupted' } };
      return outcomeResult(started.child_session_id, outcome);
    },
  };
}
