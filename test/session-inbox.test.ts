/** The Inbox alone: a bounded FIFO that knows nothing of the actor. */
import { expect, test } from 'vitest';
import { Inbox } from '../src/session/inbox.js';

const sub = (id: string) => ({ submission: { id, op: { type: 'interrupt' as const, turn_id: 't' } } });

test('enqueue hands out ingress sequences after the restored one, in order', () => {
  const inbox = new Inbox(3, 41);
  expect(inbox.enqueue(sub('a'))).toEqual({ ok: true, ingress_seq: 42 });
  expect(inbox.enqueue(sub('b'))).toEqual({ ok: true, ingress_seq: 43 });
  expect(inbox.lastAssigned).toBe(43);
  expect(inbox.peek()?.submission.id).toBe('a');
  expect(inbox.shift()?.ingress_seq).toBe(42);
  expect(inbox.shift()?.ingress_seq).toBe(43);
  expect(inbox.shift()).toBeUndefined();
  expect(inbox.size).toBe(0);
});

test('a full inbox answers busy without taking a sequence; capacity frees as items leave', () => {
  const inbox = new Inbox(2, 0);
  inbox.enqueue(sub('a'));
  inbox.enqueue(sub('b'));
  const busy = inbox.enqueue(sub('c'));
  expect(busy).toMatchObject({ ok: false, code: 'busy' });
  expect(inbox.lastAssigned).toBe(2);
  inbox.shift();
  expect(inbox.enqueue(sub('c'))).toEqual({ ok: true, ingress_seq: 3 });
});

test('stop refuses everything after and returns what was waiting', () => {
  const inbox = new Inbox(4, 0);
  inbox.enqueue(sub('a'));
  inbox.enqueue(sub('b'));
  inbox.shift();
  expect(inbox.stop().map((i) => i.submission.id)).toEqual(['b']);
  expect(inbox.enqueue(sub('c'))).toMatchObject({ ok: false, code: 'stopped' });
  expect(inbox.size).toBe(0);
});

test('many items pass through without the backing array growing without bound', () => {
  const inbox = new Inbox(10, 0);
  for (let i = 0; i < 10_000; i++) {
    inbox.enqueue(sub(`s${i}`));
    expect(inbox.shift()?.ingress_seq).toBe(i + 1);
  }
  expect((inbox as unknown as { items: unknown[] }).items.length).toBeLessThan(200);
});
