import { randomUUID } from 'node:crypto';
import { ConversationJournal } from '../../domain/conversation-journal';
import type { NotificationDraft } from '../../domain/conversation-schemas';
import { ErrorKind, KitError } from '../../domain/errors';
import { newId, relatedId } from '../../domain/ids';
import type { ConversationNotification } from '../../domain/schemas';

const threadId = newId('thread', randomUUID);
const conversationId = relatedId('conversation', threadId);
const at = '2025-01-01T00:00:00.000Z';

const message = (text: string): NotificationDraft => ({
  id: newId('notification', randomUUID),
  createdAt: at,
  body: { type: 'message', text },
});
const approval = (requestId = newId('request', randomUUID), origin = threadId): NotificationDraft => ({
  id: newId('notification', randomUUID),
  createdAt: at,
  body: { type: 'interaction', requestId, threadId: origin, kind: 'approval', prompt: 'run rm?' },
});

function kindOf(action: () => unknown): string | undefined {
  try {
    action();
    return undefined;
  } catch (error) {
    if (error instanceof KitError) return error.kind;
    throw error;
  }
}

/** Receives everything currently available for `receiverId`, starting after `afterSeq`. */
function drain(journal: ConversationJournal, receiverId: string, afterSeq = 0): ConversationNotification[] {
  const received: ConversationNotification[] = [];
  for (let cursor = afterSeq; ;) {
    const result = journal.receive(receiverId, cursor, 0);
    if (result.type !== 'notification') return received;
    received.push(result.notification);
    cursor = result.notification.seq;
  }
}

const texts = (items: ConversationNotification[]) =>
  items.map((item) => (item.body.type === 'message' ? item.body.text : item.body.type));

test('publish assigns strictly increasing seqs and drops a re-published id', () => {
  const journal = ConversationJournal.create(conversationId);
  const first = message('a');
  expect(journal.publish([first, message('b')]).seqs).toEqual([1, 2]);
  const again = journal.publish([first, message('c')]);
  expect(again.seqs).toEqual([3]);
  expect(again.duplicates).toBe(1);
});

test('the lease is exclusive while live and taken over once expired (S5.3)', () => {
  const journal = ConversationJournal.create(conversationId);
  journal.openReceiver('first', 1000, 0);
  expect(kindOf(() => journal.openReceiver('second', 1000, 999))).toBe(ErrorKind.Conflict);
  expect(journal.openReceiver('first', 1000, 500).expiresAtMs).toBe(1500);
  expect(journal.openReceiver('second', 1000, 1500).receiverId).toBe('second');
  expect(kindOf(() => journal.receive('first', 0, 1600))).toBe(ErrorKind.Conflict);
});

test('receiving the next item acknowledges the previous passive item (S5.4)', () => {
  const journal = ConversationJournal.create(conversationId);
  journal.publish([message('a'), message('b'), message('c')]);
  journal.openReceiver('r', 1000, 0);
  expect(journal.receive('r', 0, 0)).toMatchObject({ notification: { seq: 1 } });
  expect(journal.summary(0).backlogSize).toBe(3);
  expect(journal.receive('r', 1, 0)).toMatchObject({ notification: { seq: 2 } });
  expect(journal.summary(0)).toMatchObject({ backlogSize: 2, acknowledgedThrough: 1 });
  expect(journal.receive('r', 2, 0)).toMatchObject({ notification: { seq: 3 } });
  expect(journal.receive('r', 3, 0)).toEqual({ type: 'idle' });
  expect(journal.summary(0).backlogSize).toBe(1);
});

test('a retried receive with the same cursor returns the same item; a cursor never delivered is Protocol', () => {
  const journal = ConversationJournal.create(conversationId);
  journal.publish([message('a'), message('b')]);
  journal.openReceiver('r', 1000, 0);
  journal.receive('r', 0, 0);
  expect(journal.receive('r', 1, 0)).toEqual(journal.receive('r', 1, 0));
  expect(kindOf(() => journal.receive('r', 5, 0))).toBe(ErrorKind.Protocol);
});

test('a released receiver leaves its last item unacknowledged for the next one (S5.5)', () => {
  const firstRun = ConversationJournal.create(conversationId);
  firstRun.publish([message('a'), message('b'), message('c')]);
  firstRun.openReceiver('first', 1000, 0);
  firstRun.receive('first', 0, 0);
  firstRun.receive('first', 1, 0); // b delivered, a acknowledged
  expect(firstRun.release('first')).toBe(true);
  firstRun.openReceiver('second', 1000, 0);
  expect(texts(drain(firstRun, 'second'))).toEqual(['b', 'c']);
});

test('interactions are not acknowledged by receiving and are redelivered until resolved (S5.4)', () => {
  const journal = ConversationJournal.create(conversationId);
  const requestId = newId('request', randomUUID);
  journal.publish([approval(requestId), message('after')]);
  journal.openReceiver('first', 1000, 0);
  expect(texts(drain(journal, 'first'))).toEqual(['interaction', 'after']);
  journal.publish([message('later')]);
  expect(texts(drain(journal, 'first', 2))).toEqual(['later']);
  journal.release('first');
  journal.openReceiver('second', 1000, 0);
  expect(texts(drain(journal, 'second'))).toEqual(['interaction', 'later']);
  journal.resolve(requestId, { type: 'approval', approved: true }, at);
  journal.release('second');
  journal.openReceiver('third', 1000, 0);
  expect(texts(drain(journal, 'third'))).toEqual(['later']);
});

test('resolve is idempotent per request id and checks the answer (S5.4)', () => {
  const journal = ConversationJournal.create(conversationId);
  const requestId = newId('request', randomUUID);
  journal.publish([approval(requestId)]);
  expect(kindOf(() => journal.resolve(requestId, { type: 'question', text: 'yes' }, at))).toBe(
    ErrorKind.Protocol,
  );
  const first = journal.resolve(requestId, { type: 'approval', approved: false, reason: 'no' }, at);
  expect(first.firstTime).toBe(true);
  const again = journal.resolve(requestId, { type: 'approval', approved: false, reason: 'no' }, 'later');
  expect(again).toEqual({ resolution: first.resolution, firstTime: false });
  expect(kindOf(() => journal.resolve(requestId, { type: 'approval', approved: true }, at))).toBe(
    ErrorKind.Conflict,
  );
  expect(
    kindOf(() => journal.resolve(newId('request', randomUUID), { type: 'approval', approved: true }, at)),
  ).toBe(ErrorKind.NotFound);
});

test('a mirrored interaction is resolved at its origin and settled in the mirror (S5.9)', () => {
  const childThread = newId('thread', randomUUID);
  const origin = ConversationJournal.create(relatedId('conversation', childThread));
  const root = ConversationJournal.create(conversationId);
  const draft = approval(newId('request', randomUUID), childThread);
  const requestId = draft.body.type === 'interaction' ? draft.body.requestId : 'unreachable';
  origin.publish([draft], conversationId);
  root.publish([draft]);
  expect(kindOf(() => root.resolve(requestId, { type: 'approval', approved: true }, at))).toBe(
    ErrorKind.InvalidState,
  );
  const outcome = origin.resolve(requestId, { type: 'approval', approved: true }, at);
  expect(outcome.mirroredTo).toBe(conversationId);
  expect(root.settle(outcome.resolution)).toBe(true);
  expect(root.summary(0).pendingInteractions).toBe(0);
  root.openReceiver('r', 1000, 0);
  expect(drain(root, 'r')).toEqual([]);
  expect(root.publish([draft]).duplicates).toBe(1);
});

test('close refuses publishing and lets a receiver drain, then end (S5.6)', () => {
  const journal = ConversationJournal.create(conversationId);
  journal.publish([message('a'), message('b')]);
  journal.openReceiver('r', 1000, 0);
  journal.receive('r', 0, 0);
  expect(journal.close()).toEqual({ closed: true, backlogSize: 2 });
  expect(kindOf(() => journal.publish([message('late')]))).toBe(ErrorKind.Closed);
  expect(journal.summary(0).refusedAfterClose).toBe(1);
  expect(journal.receive('r', 1, 0)).toMatchObject({ notification: { seq: 2 } });
  expect(journal.receive('r', 2, 0)).toEqual({ type: 'end' });
  expect(journal.summary(0).backlogSize).toBe(0);
});

test('a snapshot survives JSON and restores the same behaviour; a bad snapshot is Protocol', () => {
  const journal = ConversationJournal.create(conversationId);
  journal.publish([message('a'), approval(), message('b')]);
  journal.openReceiver('r', 1000, 0);
  journal.receive('r', 0, 0);
  const restored = ConversationJournal.fromSnapshot(JSON.parse(JSON.stringify(journal.snapshot())));
  expect(restored.snapshot()).toEqual(journal.snapshot());
  expect(restored.receive('r', 1, 0)).toEqual(journal.receive('r', 1, 0));
  expect(kindOf(() => ConversationJournal.fromSnapshot({ schemaVersion: 2 }))).toBe(ErrorKind.Protocol);
});
