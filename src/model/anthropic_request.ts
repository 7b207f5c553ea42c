/**
 * The Anthropic Messages API request for a ModelRequest: the transcript as user/assistant
 * messages (tool results and runtime notes in user turns, thinking blocks sent back),
 * extended thinking from the reasoning effort, and prompt-cache breakpoints on the system
 * prompt and the transcript's stable prefix. Decisions are documented in docs/models.md.
 */
import type {
  CacheControlEphemeral,
  ContentBlockParam,
  MessageCreateParamsStreaming,
  MessageParam,
  TextBlockParam,
  ThinkingConfigParam,
  Tool,
} from '@anthropic-ai/sdk/resources/messages/messages';
import { ModelError, RUNTIME_NOTE_PREFIX, type ContextItem, type ModelRequest, type ToolSpec } from './types.js';

/** Output-token limit of a reply when the route sets no `max_tokens`. */
export const DEFAULT_MAX_TOKENS = 8192;

/**
 * Extended-thinking budget (tokens) per reasoning effort. The budget is added to the
 * route's `max_tokens`, so thinking never eats the visible reply's share. A positive
 * integer effort such as `"12000"` is taken as the budget itself; `none` turns thinking off.
 */
export const THINKING_BUDGETS: Readonly<Record<string, number>> = { minimal: 1024, low: 2048, medium: 8192, high: 16384 };

/** The smallest thinking budget the API accepts. */
const MIN_THINKING_BUDGET = 1024;


const EPHEMERAL: CacheControlEphemeral = { type: 'ephemeral' };

/** The streaming request body; throws ModelError('bad_request') for an unknown effort. */
export function buildAnthropicBody(request: ModelRequest): MessageCreateParamsStreaming {
  const maxTokens = request.route.max_tokens ?? DEFAULT_MAX_TOKENS;
  const effortBudget = thinkingBudget(request.reasoning_effort);
  const budget = effortBudget !== null && !openToolLoopWithoutThinking(request.context) ? effortBudget : null;
  const messages = toMessages(request.context, budget !== null);
  markStablePrefix(messages);
  const config: ThinkingConfigParam | undefined = budget !== null ? { type: 'enabled', budget_tokens: budget } : undefined;
  return {
    model: request.route.model,
    max_tokens: maxTokens + (budget ?? 0),
    messages,
    stream: true,
    ...(request.system && { system: [{ type: 'text', text: request.system, cache_control: EPHEMERAL }] }),
    ...(request.tools.length > 0 && { tools: request.tools.map(toTool) }),
    ...(config && { thinking: config }),
  };
}

/** The thinking budget of an effort, or null for no thinking. */
export function thinkingBudget(effort: string | null): number | null {
  if (effort === null || effort === 'none') return null;
  if (Object.hasOwn(THINKING_BUDGETS, effort)) return THINKING_BUDGETS[effort]!;
  if (/^\d+$/.test(effort) && Number(effort) >= MIN_THINKING_BUDGET) return Number(effort);
  const names = [...Object.keys(THINKING_BUDGETS), 'none'].join(', ');
  throw new ModelError(
    'bad_request',
    `reasoning_effort "${effort}" has no thinking budget: use one of ${names} or a token count of at least ${MIN_THINKING_BUDGET}`,
  );
}

/**
 * True when the transcript ends inside a tool loop whose assistant step carries no
 * thinking block (effort switched on mid-loop, or the step came from another provider):
 * the API refuses thinking for such a call, so it is made without thinking.
 */
function openToolLoopWithoutThinking(context: readonly ContextItem[]): boolean {
  for (let i = context.length - 1; i >= 0; i--) {
    const item = context[i]!;
    if (item.role === 'tool' || item.role === 'system') continue;
    if (item.role !== 'assistant') return false;
    return (item.tool_calls?.length ?? 0) > 0 && (item.reasoning?.length ?? 0) === 0;
  }
  return false;
}

/** Transcript → alternating messages; consecutive items of one role share a message. */
function toMessages(context: readonly ContextItem[], thinking: boolean): MessageParam[] {
  const messages: MessageParam[] = [];
  for (const item of context) {
    const role = item.role === 'assistant' ? 'assistant' : 'user';
    const blocks = toBlocks(item, thinking);
    if (blocks.length === 0) continue;
    const last = messages.at(-1);
    if (last && last.role === role) (last.content as ContentBlockParam[]).push(...blocks);
    else messages.push({ role, content: blocks });
  }
  // Tool results must open the user turn that answers the tool calls.
  for (const m of messages) {
    if (m.role !== 'user') continue;
    const blocks = m.content as ContentBlockParam[];
    m.content = [...blocks.filter((b) => b.type === 'tool_result'), ...blocks.filter((b) => b.type !== 'tool_result')];
  }
  return messages;
}

function toBlocks(item: ContextItem, thinking: boolean): ContentBlockParam[] {
  switch (item.role) {
    case 'user':
      return item.text === '' ? [] : [{ type: 'text', text: item.text }];
    case 'system':
      return [{ type: 'text', text: RUNTIME_NOTE_PREFIX + item.text }];
    case 'tool':
      return [{ type: 'tool_result', tool_use_id: wireId(item.call_id), ...(item.output !== '' && { content: item.output }) }];
    case 'assistant': {
      const blocks: ContentBlockParam[] = [];
      if (thinking) {
        for (const r of item.reasoning ?? []) {
          blocks.push(r.type === 'thinking' ? { type: 'thinking', thinking: r.thinking, signature: r.signature } : { type: 'redacted_thinking', data: r.data });
        }
      }
      if (item.text !== '') blocks.push({ type: 'text', text: item.text });
      for (const c of item.tool_calls ?? []) blocks.push({ type: 'tool_use', id: wireId(c.call_id), name: c.tool, input: c.arguments });
      // A reply of thinking alone (no text, no call) is not a valid assistant turn.
      return blocks.some((b) => b.type !== 'thinking' && b.type !== 'redacted_thinking') ? blocks : [];
    }
  }
}

/**
 * Cache breakpoints on the transcript: the end of the last message (this call writes the
 * cache for the whole prefix) and the end of the user turn before the last assistant
 * turn (where the previous call of a tool loop ended, so this call reads it). With the
 * system prompt's breakpoint that is at most 3 of the API's 4.
 */
function markStablePrefix(messages: MessageParam[]): void {
  const last = messages.length - 1;
  if (last < 0) return;
  mark(messages[last]!);
  const lastAssistant = messages.findLastIndex((m) => m.role === 'assistant');
  const previousUser = lastAssistant > 0 ? lastAssistant - 1 : -1;
  if (previousUser >= 0 && previousUser !== last && messages[previousUser]!.role === 'user') mark(messages[previousUser]!);
}

/** Puts `cache_control` on the message's last block that can carry it (not thinking). */
function mark(message: MessageParam): void {
  const blocks = message.content as ContentBlockParam[];
  for (let i = blocks.length - 1; i >= 0; i--) {
    const b = blocks[i]!;
    if (b.type === 'text' || b.type === 'tool_use' || b.type === 'tool_result') {
      (b as TextBlockParam).cache_control = EPHEMERAL;
      return;
    }
  }
}

/**
 * A call id as the API accepts it (`[A-Za-z0-9_-]`): ids made by other providers (e.g.
 * `functions.shell:0`) get their other characters replaced, the same way on both sides.
 */
function wireId(callId: string): string {
  return callId.replace(/[^A-Za-z0-9_-]/g, '_');
}

function toTool(spec: ToolSpec): Tool {
  return { name: spec.name, description: spec.description, input_schema: spec.parameters as Tool['input_schema'] };
}
