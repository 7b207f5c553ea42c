/**
 * One model call as a child actor: streams the reply back to the session actor (deltas
 * coalesced per tick), enforces the idle timeout, and is aborted when the actor leaves
 * the sampling state (interrupt, stop).
 */
import { fromCallback } from 'xstate';
import { ModelError, type ModelClient, type ModelRequest, type ToolCallRequest } from '../model/types.js';
import type { StepResult } from './turn.js';

export interface ModelStepInput {
  client: ModelClient;
  request: Omit<ModelRequest, 'signal'>;
  idleTimeoutMs: number;
}

export type ModelEvent =
  | { type: 'model.deltas'; deltas: string[] }
  | { type: 'model.done'; result: StepResult }
  | { type: 'model.failed'; code: string; message: string };

export const modelStep = fromCallback<ModelEvent, ModelStepInput>(({ input, sendBack }) => {
  const controller = new AbortController();
  let pending: string[] = [];
  let scheduled = false;
  const flushDeltas = () => {
    scheduled = false;
    if (pending.length === 0 || controller.signal.aborted) return;
    const deltas = pending;
    pending = [];
    sendBack({ type: 'model.deltas', deltas });
  };
  let idle: NodeJS.Timeout | undefined;
  let timedOut = false;
  const armIdle = () => {
    clearTimeout(idle);
    idle = setTimeout(() => {
      timedOut = true;
      controller.abort();
    }, input.idleTimeoutMs);
  };

  const run = async () => {
    let text = '';
    const calls: ToolCallRequest[] = [];
    let finish: StepResult['finish'] = 'stop';
    let usage: StepResult['usage'] = null;
    armIdle();
    for await (const chunk of input.client.stream({ ...input.request, signal: controller.signal })) {
      if (controller.signal.aborted) break;
      armIdle();
      switch (chunk.type) {
        case 'text_delta':
          if (!chunk.delta) break;
          text += chunk.delta;
          pending.push(chunk.delta);
          if (!scheduled) {
            scheduled = true;
            setImmediate(flushDeltas);
          }
          break;
        case 'tool_call':
          calls.push(chunk.call);
          break;
        case 'usage':
          usage = { input_tokens: chunk.input_tokens, output_tokens: chunk.output_tokens };
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
    sendBack({ type: 'model.done', result: { text, calls, finish, usage } });
  };

  run()
    .catch((err: unknown) => {
      if (controller.signal.aborted && !timedOut) return;
      flushDeltas();
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
    controller.abort();
  };
});
