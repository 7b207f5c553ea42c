/**
 * What a session actor is given from the outside world, as input. `SessionDeps` is
 * immutable (configuration, model routes, tools, id generation): guards and actions may
 * read it. `SessionPorts` reach mutable collaborators (the transcript, the recorder) and
 * are used only by child actors, never by a guard or an assign.
 */
import type { ModelInfo, SessionStatus } from '../../protocol/index.js';
import type { Config } from '../config/config.js';
import type { ContextItem, ModelClient, ModelRoute } from '../model/types.js';
import type { TranscriptItem } from './context.js';
import type { Tool } from '../tools/types.js';
import type { ToolListing, ToolOffer } from './toolbox.js';

/** Another session as `resume_session` shows it: its descriptor's summary, never its transcript. */
export interface OtherSession {
  session_id: string;
  title: string | null;
  cwd: string;
  model: ModelInfo;
  head_sequence: number;
  status: SessionStatus;
}

export interface SessionDeps {
  config: Config;
  routes: Map<string, ModelRoute>;
  tools: Map<string, Tool>;
  modelClient(route: ModelRoute): ModelClient;
  newId(prefix: string): string;
}

export interface SessionPorts {
  /** The transcript as it stands, compaction markers included (read when a compaction starts). */
  context(): readonly TranscriptItem[];
  /** What a model call is sent of the transcript as it stands: its model view (read when the call starts). */
  modelContext(): ContextItem[];
  /** Commit what is pending (the writer's next tick) and resolve once it is; false when the commit failed (a tool call's start). */
  commitStart(): Promise<boolean>;
  /** No submission waits in the inbox (read as a tool call's result is handed to the actor). */
  inboxEmpty(): boolean;
  /** What the next model call is offered (MCP servers started as needed) and new warnings; a Promise while servers start. */
  offerTools(): ToolOffer | Promise<ToolOffer>;
  /** The tool a call names, looked up when it runs (built-in, delegate or MCP); a Promise while servers start. */
  tool(name: string): Tool | undefined | Promise<Tool | undefined>;
}

export type { ToolListing };
