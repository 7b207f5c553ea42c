/**
 * One model call as a child actor: streams the reply back to the session actor (deltas
 * coalesced for about a millisecond), enforces the idle timeout, and is aborted when the
 * actor leaves the sampling state (interrupt, stop).
 */
import { fromCallback } from 'xstate';
import type { TurnFailureCode } from '../../protocol/index.js';
import { ModelError, type ModelClient, type ModelRequest, type ReasoningBlock, type ToolCallRequest } from '../model/types.js';
import { Coalescer } from './coalescer.js';
import type { ToolApproval, ToolOffer } from './toolbox.js';
import { nameTable, ownEntry } from './toolbox.js';
import { afterShared } from './shared_timer.js';
import type { StepResult } from './turn.js';

export interface ModelStepInput {
  client: ModelClient;
  /** Built when the call starts (the context as it stands then); the tools come from `tools`. */
  request: () => Omit<ModelRequest, 'signal' | 'tools'>;
  /** The tools offered to this call (MCP servers are started here, before the request). */
  tools: () => ToolOffer | Promise<ToolOffer>;
  idleTimeoutMs: number;
}

export type ModelEvent =
  | { type: 'model.deltas'; deltas: string[] }
  /** MCP server failures to journal as `warning` events (before the call's reply). */
  | { type: 'model.warnings'; messages: string[] }
  /** Pieces of the model's thinking (`agent_reasoning_delta` events), in stream order with the text deltas. */
  | { type: 'model.reasoning'; deltas: string[] }
  /** The reply's text is what the deltas carried (the actor keeps it): not repeated here. */
  | { type: 'model.done'; result: Omit<StepResult, 'text'>; approvals?: Record<string, ToolApproval> }
  | { type: 'model.failed'; code: TurnFailureCode; message: string };

/** Deltas handed to the actor in one event at most (bounds event and batch sizes). */
const MAX_DELTAS_PER_EVENT = 256;

/** A streamed piece: reply text, or thinking. */
type Piece = string | { reasoning: string };

/** Consecutive pieces of one kind, as one actor event each. */
function runsOf(items: Piece[]): ModelEvent[] {
  // The common case, text only: the gathered array is the event's (no copy).
  if (items.every((p) => typeof p === 'string')) return [{ type: 'model.deltas', deltas: items as string[] }];
  const out: Array<{ type: 'model.deltas' | 'model.reasoning'; deltas: string[] }> = [];
  for (const p of items) {
    const type = typeof p === 'string' ? 'model.deltas' : 'model.reasoning';
    const text = typeof p === 'string' ? p : p.reasoning;
    const last = out[out.length - 1];
    if (last?.type === type) last.deltas.push(text);
    else out.push({ type, deltas: [text] });
  }
  return out;
}

export const modelStep = fromCallback<ModelEvent, ModelStepInput>(({ input, sendBack }) => {
  const controller = new AbortController();
  // Nothing is visible before the recorder's group commit anyway: hand deltas over at the
  // next shared tick (about a millisecond; one timer for every session), in one actor event.
  // Text and thinking pieces share one buffer so their events keep the stream's order.
  const deltas = new Coalescer<Piece>(
    (items) => {
      for (const run of runsOf(items)) sendBack(run);
    },
    afterShared,
    controller.signal,
    MAX_DELTAS_PER_EVENT,
  );
  const flushDeltas = () => deltas.flush();
  // One timer per call: each chunk only stamps the time; the timer re-arms itself for
  // whatever is left of the idle window (no timer churn per chunk).
  let lastChunkAt = Date.now();
  let timedOut = false;
  let finished = false;
  const onIdleTimer = () => {
    const quietFor = Date.now() - lastChunkAt;
    if (quietFor >= input.idleTimeoutMs) {
      timedOut = true;
      controller.abort();
    } else {
      idle = setTimeout(onIdleTimer, input.idleTimeoutMs - quietFor);
    }
  };
  // Armed once the tools are offered (starting MCP servers is not the model's idle time).
  let idle: NodeJS.Timeout | undefined;

  const run = async () => {
    const calls: ToolCallRequest[] = [];
    const reasoning: ReasoningBlock[] = [];
    let finish: StepResult['finish'] = 'stop';
    let usage: StepResult['usage'] = null;
    // Awaited even when answered at once, so the request is built (its context grows with
    // the history) after the session has committed and sent what the step's submission
    // started: a turn's first events reach clients without waiting for it (submit_latency;
    // docs/performance.md item 12). The transcript is complete by then either way: XState
    // starts an invoked child in the same deferred queue as the emitted `change` effects,
    // after them.
    const offer = await input.tools();
    if (controller.signal.aborted) return;
    if (offer.warnings.length > 0) sendBack({ type: 'model.warnings', messages: offer.warnings });
    lastChunkAt = Date.now();
    idle = setTimeout(onIdleTimer, input.idleTimeoutMs);
    const request = {
      ...input.request(),
      tools: offer.specs,
      signal: controller.signal,
      // The provider backs off before a retry: the idle window starts after the wait.
      onBackoff: (ms: number) => {
        lastChunkAt = Date.now() + ms;
      },
    };
    for await (const chunk of input.client.stream(request)) {
      if (controller.signal.aborted) break;
      lastChunkAt = Date.now();
      switch (chunk.type) {
        case 'text_delta':
          if (chunk.delta) deltas.push(chunk.delta);
          break;
        case 'reasoning_delta':
          if (chunk.delta) deltas.push({ reasoning: chunk.delta });
          break;
        case 'reasoning_block':
          reasoning.push(chunk.block);
          break;
        case 'tool_call':
          calls.push(chunk.call);
          break;
        case 'usage':
          usage = {
            input_tokens: chunk.input_tokens,
            output_tokens: chunk.output_tokens,
            ...(chunk.cached_input_tokens !== undefined && { cached_input_tokens: chunk.cached_input_tokens }),
            ...(chunk.reasoning_tokens !== undefined && { reasoning_tokens: chunk.reasoning_tokens }),
          };
          break;
        case 'finish':
          finish = chunk.reason;
          break;
      }
    }
    if (timedOut) throw new ModelError('model_idle_timeout', `the model stream sent nothing for ${input.idleTimeoutMs} ms`);
    if (controller.signal.aborted) return;
    if (calls.length > 0) finish = 'tool_calls';
    flushDeltas();
    finished = true;
    // The approval mode of each tool called, as offered (an MCP server's `approval`).
    const approvals = nameTable<ToolApproval>();
    for (const call of calls) {
      const mode = ownEntry(offer.approvals, call.tool);
      if (mode) approvals[call.tool] = mode;
    }
    sendBack({ type: 'model.done', result: { calls, finish, usage, ...(reasoning.length > 0 && { reasoning }) }, approvals });
  };

  run()
    .catch((err: unknown) => {
      if (controller.signal.aborted && !timedOut) return;
      flushDeltas();
      finished = true;
      if (timedOut) {
        sendBack({ type: 'model.failed', code: 'model_idle_timeout', message: `the model stream sent nothing for ${input.idleTimeoutMs} ms` });
      } else if (err instanceof ModelError) {
        sendBack({ type: 'model.failed', code: err.code, message: err.message });
      } else {
        sendBack({ type: 'model.failed', code: 'model_error', message: (err as Error)?.message ?? String(err) });
      }
    })
    .finally(() => clearTimeout(idle));

  return () => {
    clearTimeout(idle);
    // Aborting builds an exception object: only do it when the call is still going.
    if (!finished) controller.abort();
  };
});
