/**
 * The ports a session's actor is given (SessionPorts), as one object whose methods live on
 * its prototype — an idle session holds no closure per port — and the session's toolbox,
 * built only when first needed (a model call's offer, a tool call, `session tools`): an
 * idle resident session holds neither its toolbox nor its `delegate` tool.
 */
import type { McpToolset } from '../mcp/index.js';
import type { ContextItem } from '../model/types.js';
import type { Tool } from '../tools/types.js';
import type { TranscriptItem } from './context.js';
import type { SessionPorts } from './deps.js';
import type { Inbox } from './inbox.js';
import type { Recorder } from './recorder.js';
import type { SessionState } from './state.js';
import type { SessionToolbox, ToolOffer } from './toolbox.js';
import type { Transcript } from './transcript.js';

/** Builds a session's toolbox (built-ins, its `delegate`, its MCP toolset); one function shared by a host's sessions. */
export type ToolboxFactory = (session: { readonly state: SessionState }, mcp: McpToolset | null) => SessionToolbox;

export class SessionPortsOf implements SessionPorts {
  private box: SessionToolbox | null = null;

  constructor(
    private readonly transcript: Transcript,
    private readonly recorder: Recorder,
    private readonly inbox: Inbox,
    /** The session, as its toolbox's `delegate` reads it when a call runs. */
    private readonly session: { readonly state: SessionState },
    /** Builds the toolbox on first use. */
    private readonly makeToolbox: ToolboxFactory,
    /** The session's MCP toolset (acquired at hydration), closed with the toolbox — or alone if none was built. */
    private readonly mcp: McpToolset | null,
  ) {}

  context(): readonly TranscriptItem[] {
    return this.transcript.all();
  }

  modelContext(): ContextItem[] {
    return this.transcript.modelContext();
  }

  commitStart(): Promise<boolean> {
    return this.recorder.flush();
  }

  inboxEmpty(): boolean {
    return this.inbox.size === 0;
  }

  /**
   * Asked as a model call starts: answered once what the session recorded so far is
   * committed (the turn's first batch reaches subscribers before the request is built).
   */
  async offerTools(): Promise<ToolOffer> {
    await this.recorder.flush();
    return this.toolbox().offer();
  }

  tool(name: string): Tool | undefined | Promise<Tool | undefined> {
    return this.toolbox().tool(name);
  }

  /** The session's toolbox, built now if it was not yet. */
  toolbox(): SessionToolbox {
    return (this.box ??= this.makeToolbox(this.session, this.mcp));
  }

  /** The session leaves memory: its MCP servers may end (after their linger). */
  closeTools(): void {
    if (this.box) this.box.close();
    else this.mcp?.close();
  }
}
