/**
 * What a session actor needs from the outside world, handed in as input: the journal
 * path (Recorder), the model context (Transcript), its Inbox, configuration, model
 * routes and tools. Nothing here is session state.
 */
import type { Config } from '../config/config.js';
import type { ContextItem, ModelClient, ModelRoute } from '../model/types.js';
import type { Tool } from '../tools/types.js';
import type { Inbox } from './inbox.js';
import type { Recorder } from './recorder.js';
import type { Transcript } from './transcript.js';

export interface OtherSession {
  state: { title: string | null; cwd: string; model: unknown; head_sequence: number };
  transcript: ContextItem[];
}

export interface SessionDeps {
  recorder: Recorder;
  transcript: Transcript;
  inbox: Inbox;
  config: Config;
  routes: Map<string, ModelRoute>;
  tools: Map<string, Tool>;
  modelClient(route: ModelRoute): ModelClient;
  /** Was this message submission id admitted before (journal lookup)? */
  isAdmitted(submissionId: string): boolean;
  /** Another session's checkpoint summary, for resume_session; null if none or invalid. */
  lookupSession(sessionId: string): OtherSession | null;
  newId(prefix: string): string;
}
