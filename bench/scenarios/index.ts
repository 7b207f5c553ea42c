/** Every scenario, in the order `npm run bench` runs them. */
import type { Scenario } from '../lib/scenario.js';
import { cluster } from './cluster.js';
import { clusterRtt } from './cluster_rtt.js';
import { fanout } from './fanout.js';
import { journalStream } from './journal_stream.js';
import { manySessions } from './many_sessions.js';
import { peerLanggraph } from './peer_langgraph.js';
import { replayScaling } from './replay_scaling.js';
import { sessionMemory } from './session_memory.js';
import { startupScaling } from './startup_scaling.js';
import { submitLatency } from './submit_latency.js';

export const SCENARIOS: Scenario[] = [journalStream, submitLatency, replayScaling, startupScaling, sessionMemory, fanout, peerLanggraph, manySessions, cluster, clusterRtt];
