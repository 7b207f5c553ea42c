/**
 * The wire encoders of protocol/encode.ts: each one's output equals JSON.stringify of the
 * schema-valid object it stands for (property test over schema-valid values), so the
 * template paths (batch, history, deltas) are byte-identical to the generic path.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  BatchFrameSchema,
  ErrorCodeSchema,
  ErrorFrameSchema,
  EventSchema,
  HistoryFrameSchema,
  LIMITS,
  OutputStreamSchema,
  TurnFailureCodeSchema,
  UserMessageModeSchema,
  appendMessageDeltas,
  appendOutputDeltas,
  encodeBatchFrame,
  encodeEvent,
  encodeEventList,
  encodeHistoryFrame,
  errorFrame,
  type EventIds,
  type EventMsg,
} from '../protocol/index.js';

const RUNS = { numRuns: 300 };

/** Any string, including control characters, quotes, backslashes, U+2028 and lone surrogates. */
const text = fc.string({ unit: 'binary', maxLength: 40 });
const identifier = fc.stringMatching(new RegExp(`^[A-Za-z0-9._:-]{1,${LIMITS.identifierMaxBytes}}$`));
const millis = fc.nat();
const sequence = fc.integer({ min: 1, max: Number.MAX_SAFE_INTEGER });
const ids: fc.Arbitrary<EventIds> = fc.record({ submission_id: fc.option(identifier, { nil: null }), turn_id: fc.option(identifier, { nil: null }) });
const chunk = fc.record({ stream: fc.constantFrom(...OutputStreamSchema.options), chunk: text });

const msg: fc.Arbitrary<EventMsg> = fc.oneof(
  text.map((delta) => ({ type: 'agent_message_delta' as const, delta })),
  fc.record({ call_id: text.filter((s) => s.length > 0), c: chunk }).map(({ call_id, c }) => ({ type: 'exec_output_delta' as const, call_id, ...c })),
  fc.record({ text, mode: fc.constantFrom(...UserMessageModeSchema.options) }).map((m) => ({ type: 'user_message' as const, ...m })),
  text.map((message) => ({ type: 'warning' as const, message })),
  fc.record({ code: fc.constantFrom(...TurnFailureCodeSchema.options), message: text }).map((error) => ({ type: 'turn_failed' as const, error })),
  fc.record({ capability: text, command: text, output: fc.jsonValue({ maxDepth: 3 }) }).map((m) => ({ type: 'capability_output' as const, ...m })),
);
const event = fc.record({ ids, ts: millis, msg }).map(({ ids: i, ts, msg: m }) => ({ ...i, ts, msg: m }));

/** JSON.parse + strict schema: the encoded text is a schema-valid frame equal to `expected`. */
const parsesTo = (schema: { parse(v: unknown): unknown }, encoded: string, expected: unknown) =>
  expect(schema.parse(JSON.parse(encoded))).toEqual(JSON.parse(JSON.stringify(expected)));

describe('wire encoders equal JSON.stringify of the schema-valid object', () => {
  it('event envelope', () => {
    fc.assert(
      fc.property(event, (e) => {
        const encoded = encodeEvent(e.msg, e.submission_id, e.turn_id, e.ts);
        expect(encoded).toBe(JSON.stringify(e));
        parsesTo(EventSchema, encoded, e);
      }),
      RUNS,
    );
  });

  it('batch frame around an encoded event list', () => {
    fc.assert(
      fc.property(identifier, sequence, millis, fc.array(event, { maxLength: 6 }), (session_id, seq, at, events) => {
        const eventsJson = encodeEventList(events.map((e) => encodeEvent(e.msg, e.submission_id, e.turn_id, e.ts)));
        expect(eventsJson).toBe(JSON.stringify(events));
        const frame = { type: 'batch', session_id, sequence: seq, committed_at: at, events };
        const encoded = encodeBatchFrame(session_id, seq, at, eventsJson);
        expect(encoded).toBe(JSON.stringify(frame));
        parsesTo(BatchFrameSchema, encoded, frame);
      }),
      RUNS,
    );
  });

  it('history frame around encoded batch frames', () => {
    const batch = fc.record({ sequence, committed_at: millis, events: fc.array(event, { maxLength: 3 }) });
    fc.assert(
      fc.property(
        text.filter((s) => s.length > 0),
        identifier,
        fc.array(batch, { maxLength: 4 }),
        fc.option(sequence, { nil: null }),
        (req_id, session_id, batches, next) => {
          const frames = batches.map((b) => ({ type: 'batch' as const, session_id, ...b }));
          const texts = frames.map((b) => encodeBatchFrame(session_id, b.sequence, b.committed_at, JSON.stringify(b.events)));
          const frame = { type: 'history', req_id, session_id, batches: frames, next_before_sequence: next };
          const encoded = encodeHistoryFrame(req_id, session_id, texts, next);
          expect(encoded).toBe(JSON.stringify(frame));
          parsesTo(HistoryFrameSchema, encoded, frame);
        },
      ),
      RUNS,
    );
  });

  it('message deltas (the hot-path template)', () => {
    fc.assert(
      fc.property(ids, millis, fc.array(text, { maxLength: 8 }), (i, ts, deltas) => {
        const out = ['kept'];
        appendMessageDeltas(out, i, ts, deltas);
        const expected = deltas.map((delta) => JSON.stringify({ ...i, ts, msg: { type: 'agent_message_delta', delta } }));
        expect(out).toEqual(['kept', ...expected]);
        for (const e of out.slice(1)) EventSchema.parse(JSON.parse(e));
      }),
      RUNS,
    );
  });

  it('output deltas (the hot-path template)', () => {
    fc.assert(
      fc.property(ids, millis, text.filter((s) => s.length > 0), fc.array(chunk, { maxLength: 8 }), (i, ts, callId, chunks) => {
        const out: string[] = [];
        appendOutputDeltas(out, i, ts, callId, chunks);
        const expected = chunks.map((c) => encodeEvent({ type: 'exec_output_delta', call_id: callId, ...c }, i.submission_id, i.turn_id, ts));
        expect(out).toEqual(expected);
        for (const e of out) EventSchema.parse(JSON.parse(e));
      }),
      RUNS,
    );
  });

  it('error frame: absent correlation ids are left out, present ones echoed', () => {
    const ctx = fc.record({ req_id: fc.option(text, { nil: undefined }), submission_id: fc.option(text, { nil: undefined }) });
    fc.assert(
      fc.property(fc.constantFrom(...ErrorCodeSchema.options), text, ctx, (code, message, c) => {
        const frame = errorFrame(code, message, c);
        expect(Object.values(frame)).not.toContain(undefined);
        const expected = { type: 'error', code, message, ...(c.req_id !== undefined && { req_id: c.req_id }), ...(c.submission_id !== undefined && { submission_id: c.submission_id }) };
        expect(JSON.stringify(frame)).toBe(JSON.stringify(expected));
        parsesTo(ErrorFrameSchema, JSON.stringify(frame), expected);
      }),
      RUNS,
    );
  });
});
