/**
 * The raw ceiling of the many_sessions benchmark, in its own process: the least a daemon
 * must do for the same work, without agentd's structure. Plain `http` (a keep-alive agent)
 * to the fake model server, SSE parsed by hand, each delta turned into the same event JSON
 * agentd journals, every session's pending events committed in one SQLite transaction per
 * tick (WAL, synchronous=NORMAL, a batch row + the session row's head and checkpoint), then
 * the batch frame sent with `ws`. It answers just the frames the bench clients send
 * (hello, create_session, attach, submit).
 *
 *   node dist/bench/lib/raw-ceiling.js --sse PORT --db FILE   → prints "raw listening on PORT"
 */
import Database from 'better-sqlite3';
import { Agent, request } from 'node:http';
import { WebSocketServer, type WebSocket } from 'ws';

const arg = (name: string) => process.argv[process.argv.indexOf(name) + 1]!;
const ssePort = Number(arg('--sse'));
const TICK_MS = 2;

const db = new Database(arg('--db'));
db.pragma('journal_mode = WAL');
db.pragma('synchronous = NORMAL');
db.exec(`CREATE TABLE IF NOT EXISTS sessions (session_id TEXT PRIMARY KEY, head INTEGER NOT NULL, checkpoint TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS batches (session_id TEXT NOT NULL, sequence INTEGER NOT NULL, committed_at INTEGER NOT NULL, events TEXT NOT NULL,
  PRIMARY KEY (session_id, sequence)) WITHOUT ROWID;`);
const insertSession = db.prepare('INSERT INTO sessions (session_id, head, checkpoint) VALUES (?, 0, ?)');
const insertBatch = db.prepare('INSERT INTO batches (session_id, sequence, committed_at, events) VALUES (?, ?, ?, ?)');
const updateSession = db.prepare('UPDATE sessions SET head = ?, checkpoint = ? WHERE session_id = ?');

interface RawSession {
  id: string;
  head: number;
  pending: string[];
  subscribers: Set<WebSocket>;
  turn: number;
  submission: string;
}

const sessions = new Map<string, RawSession>();
const dirty = new Set<RawSession>();
let timer: NodeJS.Timeout | null = null;
let created = 0;
const agent = new Agent({ keepAlive: true, maxSockets: Infinity });

const commitAll = db.transaction((list: RawSession[], at: number) => {
  for (const s of list) {
    insertBatch.run(s.id, s.head + 1, at, `[${s.pending.join(',')}]`);
    updateSession.run(s.head + 1, `{"session_id":"${s.id}","turn":${s.turn}}`, s.id);
  }
});

function tick(): void {
  timer = null;
  const list = [...dirty];
  dirty.clear();
  const at = Date.now();
  commitAll(list, at);
  for (const s of list) {
    s.head++;
    const frame = `{"type":"batch","session_id":"${s.id}","sequence":${s.head},"committed_at":${at},"events":[${s.pending.join(',')}]}`;
    s.pending = [];
    for (const ws of s.subscribers) ws.send(frame);
  }
}

function emit(s: RawSession, msg: string): void {
  s.pending.push(`{"submission_id":"${s.submission}","turn_id":"t${s.turn}","timestamp":${Date.now()},"msg":${msg}}`);
  dirty.add(s);
  timer ??= setTimeout(tick, TICK_MS);
}

function runTurn(s: RawSession, text: string): void {
  s.turn++;
  emit(s, `{"type":"user_message","text":${JSON.stringify(text)}}`);
  emit(s, `{"type":"turn_started","turn_id":"t${s.turn}"}`);
  const body = JSON.stringify({ model: 'fake', stream: true, messages: [{ role: 'user', content: text }] });
  const req = request(
    { host: '127.0.0.1', port: ssePort, path: '/v1/chat/completions', method: 'POST', agent, headers: { 'content-type': 'application/json' } },
    (res) => {
      res.setEncoding('utf8');
      let buffer = '';
      res.on('data', (d: string) => {
        buffer += d;
        let end: number;
        while ((end = buffer.indexOf('\n\n')) >= 0) {
          const event = buffer.slice(0, end);
          buffer = buffer.slice(end + 2);
          if (!event.startsWith('data: ') || event === 'data: [DONE]') continue;
          const chunk = JSON.parse(event.slice(6)) as { choices: Array<{ delta: { content?: string } }> };
          const content = chunk.choices[0]?.delta.content;
          if (content) emit(s, `{"type":"agent_message_delta","delta":${JSON.stringify(content)}}`);
        }
      });
      res.on('end', () => emit(s, `{"type":"turn_complete","turn_id":"t${s.turn}"}`));
    },
  );
  req.on('error', () => emit(s, `{"type":"turn_failed","turn_id":"t${s.turn}","code":"provider_unavailable"}`));
  req.end(body);
}

const wss = new WebSocketServer({ host: '127.0.0.1', port: 0, perMessageDeflate: false });
wss.on('connection', (ws) => {
  ws.on('message', (data) => {
    const f = JSON.parse(data.toString()) as {
      type: string;
      req_id?: string;
      session_id?: string;
      submission?: { id: string; op: { text: string } };
    };
    if (f.type === 'hello') ws.send('{"type":"welcome","protocol":1}');
    else if (f.type === 'create_session') {
      const id = `raw${++created}`;
      insertSession.run(id, '{}');
      sessions.set(id, { id, head: 0, pending: [], subscribers: new Set(), turn: 0, submission: '' });
      ws.send(JSON.stringify({ type: 'session_created', req_id: f.req_id, session: { session_id: id } }));
    } else if (f.type === 'attach') {
      const s = sessions.get(f.session_id!)!;
      s.subscribers.add(ws);
      ws.on('close', () => s.subscribers.delete(ws));
      ws.send(JSON.stringify({ type: 'attached', req_id: f.req_id, session_id: s.id }));
    } else if (f.type === 'submit') {
      const s = sessions.get(f.session_id!)!;
      s.submission = f.submission!.id;
      runTurn(s, f.submission!.op.text);
    }
  });
});
wss.on('listening', () => {
  const address = wss.address();
  process.stdout.write(`raw listening on ${typeof address === 'object' && address ? address.port : 0}\n`);
});
process.on('SIGTERM', () => {
  db.close();
  process.exit(0);
});
