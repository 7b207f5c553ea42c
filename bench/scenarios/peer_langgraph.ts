/**
 * peer_langgraph: durable agent steps/s on one session/thread running turns of a 10-step
 * tool loop with a zero-latency model: each turn is 10 model calls asking for `read_file`
 * of a small file (the real agentd tool, on both sides) and one final answer — 11 steps
 * (model call + its tool run) per turn, every step durable before the next starts.
 *
 *   agentd:    SessionHost in this process (no WebSocket), approval_policy auto,
 *              journal synchronous=NORMAL (the default).
 *   LangGraph: StateGraph(MessagesAnnotation) agent ⇄ ToolNode, SqliteSaver from
 *              @langchain/langgraph-checkpoint-sqlite on a file (WAL, synchronous=NORMAL
 *              to match agentd), invoke(..., {durability: "sync"}).
 *
 * Both run the same number of turns on one growing history; steps/s over all of them.
 */
import Database from 'better-sqlite3';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { AIMessage, HumanMessage, ToolMessage, type BaseMessage } from '@langchain/core/messages';
import { tool } from '@langchain/core/tools';
import { END, MessagesAnnotation, START, StateGraph } from '@langchain/langgraph';
import { SqliteSaver } from '@langchain/langgraph-checkpoint-sqlite';
import { ToolNode, toolsCondition } from '@langchain/langgraph/prebuilt';
import { z } from 'zod';
import { isTurnEnd } from '../../protocol/index.js';
import type { CommittedBatch } from '../../src/session/api.js';
import { readFileTool } from '../../src/tools/files.js';
import { openHost } from '../lib/inproc.js';
import { LOOP_FILES, loopFile, toolLoopModel } from '../lib/models.js';
import type { Measurement, RunOptions, Scenario } from '../lib/scenario.js';
import { median, now, progress, removeDir, round, tempDir } from '../lib/util.js';

const STEPS = 10;
const STEPS_PER_TURN = STEPS + 1;

function makeWorkspace(): string {
  const dir = tempDir();
  for (let k = 0; k < LOOP_FILES; k++) writeFileSync(join(dir, loopFile(k)), `file ${k}\n${'some text to read. '.repeat(10)}\n`);
  return dir;
}

interface Run {
  stepsPerSec: number;
  steps: number;
  ms: number;
  firstTurnMs: number;
  lastTurnMs: number;
}

export async function runAgentd(turns: number): Promise<Run> {
  const dir = makeWorkspace();
  const host = await openHost(dir, { approval_policy: 'auto' }, () => toolLoopModel(STEPS));
  try {
    const sessionId = (await host.create({ cwd: dir })).session_id;
    const session = (await host.open(sessionId))!;
    let onEnd: ((e: { type: string; model_calls?: number }) => void) | null = null;
    session.subscribe((batch: CommittedBatch) => {
      for (const e of batch.events) {
        if (isTurnEnd(e.msg)) onEnd?.(e.msg as never);
      }
    });
    let steps = 0;
    const turnMs: number[] = [];
    const t0 = now();
    for (let t = 0; t < turns; t++) {
      const ts = now();
      const end = new Promise<{ type: string; model_calls?: number; error?: unknown }>((resolve) => (onEnd = resolve));
      const r = session.submit({ id: `m${t}`, op: { type: 'message', text: `turn ${t}: read the files` } });
      if (!r.ok) throw new Error(`submit refused: ${r.message}`);
      const msg = await end;
      if (msg.type !== 'turn_complete') throw new Error(`agentd turn ended ${msg.type}: ${JSON.stringify(msg)}`);
      steps += msg.model_calls!;
      turnMs.push(now() - ts);
    }
    const ms = now() - t0;
    if (steps !== turns * STEPS_PER_TURN) throw new Error(`agentd ran ${steps} steps, expected ${turns * STEPS_PER_TURN}`);
    return { stepsPerSec: steps / (ms / 1000), steps, ms, firstTurnMs: turnMs[0]!, lastTurnMs: turnMs[turnMs.length - 1]! };
  } finally {
    await host.close();
    removeDir(dir);
  }
}

export async function runLangGraph(turns: number): Promise<Run> {
  const dir = makeWorkspace();
  const db = new Database(join(dir, 'langgraph.db'));
  db.pragma('journal_mode = WAL');
  db.pragma('synchronous = NORMAL');
  const checkpointer = new SqliteSaver(db);
  try {
    const readFile = tool(
      async ({ path }: { path: string }) => {
        const r = await readFileTool.run({ path }, { cwd: dir, signal: new AbortController().signal, onOutput() {} });
        return r.output;
      },
      { name: 'read_file', description: readFileTool.spec.description, schema: z.object({ path: z.string() }) },
    );
    let calls = 0;
    let modelCalls = 0;
    const agent = async (state: { messages: BaseMessage[] }) => {
      modelCalls++;
      let done = 0;
      for (let i = state.messages.length - 1; i >= 0; i--) {
        const m = state.messages[i]!;
        if (m instanceof HumanMessage) break;
        if (m instanceof ToolMessage) done++;
      }
      if (done < STEPS) {
        return {
          messages: [new AIMessage({ content: '', tool_calls: [{ id: `call_${++calls}`, name: 'read_file', args: { path: loopFile(done) }, type: 'tool_call' }] })],
        };
      }
      return { messages: [new AIMessage('done')] };
    };
    const graph = new StateGraph(MessagesAnnotation)
      .addNode('agent', agent)
      .addNode('tools', new ToolNode([readFile]))
      .addEdge(START, 'agent')
      .addConditionalEdges('agent', toolsCondition, ['tools', END])
      .addEdge('tools', 'agent')
      .compile({ checkpointer });
    const config = { configurable: { thread_id: 'bench' }, durability: 'sync' as const, recursionLimit: 100 };
    const turnMs: number[] = [];
    const t0 = now();
    for (let t = 0; t < turns; t++) {
      const ts = now();
      const out = await graph.invoke({ messages: [new HumanMessage(`turn ${t}: read the files`)] }, config);
      const last = out.messages[out.messages.length - 1];
      if (!(last instanceof AIMessage) || last.content !== 'done') throw new Error('LangGraph turn did not end with the final answer');
      turnMs.push(now() - ts);
    }
    const ms = now() - t0;
    if (modelCalls !== turns * STEPS_PER_TURN) throw new Error(`LangGraph ran ${modelCalls} steps, expected ${turns * STEPS_PER_TURN}`);
    return { stepsPerSec: modelCalls / (ms / 1000), steps: modelCalls, ms, firstTurnMs: turnMs[0]!, lastTurnMs: turnMs[turnMs.length - 1]! };
  } finally {
    db.close();
    removeDir(dir);
  }
}

/** The tool alone: sequential read_file calls on the same kind of file, ms per call. */
export async function toolMsPerCall(calls: number): Promise<number> {
  const dir = makeWorkspace();
  try {
    const ctx = { cwd: dir, signal: new AbortController().signal, onOutput() {} };
    const t0 = now();
    for (let i = 0; i < calls; i++) await readFileTool.run({ path: loopFile(i) }, ctx);
    return (now() - t0) / calls;
  } finally {
    removeDir(dir);
  }
}

export const peerLanggraph: Scenario = {
  name: 'peer_langgraph',
  what: 'durable agent steps/s, 10-step read_file tool loop per turn, zero-latency model',
  baselineWhat: 'LangGraph JS + SqliteSaver, durability "sync", the same loop',
  goal: { on: 'ratio', op: '>=', limit: 20, text: 'ratio ≥ 20' },
  async run(options: RunOptions): Promise<Measurement> {
    const turns = options.quick ? 5 : 20;
    const reps = options.quick ? 1 : 3;
    // Warm-up both (JIT, module init) on a couple of turns.
    progress('warm-up: 2 turns each');
    await runAgentd(2);
    await runLangGraph(2);
    const a: Run[] = [];
    const l: Run[] = [];
    const tool: number[] = [];
    for (let i = 0; i < reps; i++) {
      progress(`rep ${i + 1}/${reps}: the read_file tool alone, ${turns * STEPS} calls`);
      tool.push(await toolMsPerCall(turns * STEPS));
      progress(`rep ${i + 1}/${reps}: agentd, ${turns} turns × ${STEPS_PER_TURN} steps`);
      a.push(await runAgentd(turns));
      progress(`rep ${i + 1}/${reps}: LangGraph, ${turns} turns × ${STEPS_PER_TURN} steps`);
      l.push(await runLangGraph(turns));
    }
    const value = median(a.map((x) => x.stepsPerSec));
    const baseline = median(l.map((x) => x.stepsPerSec));
    const msPerStep = (r: Run[]) => round(median(r.map((x) => x.ms / x.steps)), 3);
    // Tool time per step (10 tool runs per 11 steps), the same on both sides: what is left is
    // the runtime's own cost per step.
    const toolPerStep = (median(tool) * STEPS) / STEPS_PER_TURN;
    const agentdOwn = msPerStep(a) - toolPerStep;
    const langgraphOwn = msPerStep(l) - toolPerStep;
    return {
      value: Math.round(value),
      unit: 'steps/s',
      baseline: Math.round(baseline),
      ratio: round(value / baseline, 1),
      details: {
        turns,
        steps_per_turn: STEPS_PER_TURN,
        agentd_ms_per_step: msPerStep(a),
        langgraph_ms_per_step: msPerStep(l),
        agentd_first_turn_ms: round(median(a.map((x) => x.firstTurnMs)), 2),
        agentd_last_turn_ms: round(median(a.map((x) => x.lastTurnMs)), 2),
        langgraph_first_turn_ms: round(median(l.map((x) => x.firstTurnMs)), 2),
        langgraph_last_turn_ms: round(median(l.map((x) => x.lastTurnMs)), 2),
        read_file_ms_per_call: round(median(tool), 3),
        agentd_own_ms_per_step: round(agentdOwn, 3),
        langgraph_own_ms_per_step: round(langgraphOwn, 3),
        ratio_without_tool: round(langgraphOwn / agentdOwn, 1),
        ratio_ceiling_with_tool: round(msPerStep(l) / toolPerStep, 1),
        // LangGraph's cost per turn grows with the thread's history, agentd's does not.
        ratio_last_turn: round(median(l.map((x) => x.lastTurnMs)) / median(a.map((x) => x.lastTurnMs)), 1),
        reps,
      },
      note:
        `${msPerStep(a)} vs ${msPerStep(l)} ms/step, of which read_file ${toolPerStep.toFixed(3)} ms on both sides ` +
        `(ceiling ${(msPerStep(l) / toolPerStep).toFixed(1)}×; runtime alone ${(langgraphOwn / agentdOwn).toFixed(1)}×); ` +
        `LangGraph turn ${median(l.map((x) => x.firstTurnMs)).toFixed(0)} → ${median(l.map((x) => x.lastTurnMs)).toFixed(0)} ms as history grows`,
    };
  },
};
