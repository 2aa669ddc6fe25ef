import { randomUUID } from 'node:crypto';
import { ConversationNotificationReceiver } from '../../client/conversation-receiver';
import { ErrorKind, KitError } from '../../domain/errors';
import { newId, relatedId } from '../../domain/ids';
import type { ConversationNotification } from '../../domain/schemas';

const conversationId = relatedId('conversation', newId('thread', randomUUID));
const item = (seq: number): ConversationNotification => ({
  id: newId('notification', randomUUID),
  conversationId,
  seq,
  createdAt: '2025-01-01T00:00:00.000Z',
  body: { type: 'message', text: `item ${seq}` },
});

async function* source(...steps: (ConversationNotification | KitError)[]) {
  yield* steps;
}

async function outcome(receiver: ConversationNotificationReceiver): Promise<number | string | null> {
  try {
    return (await receiver.recv())?.seq ?? null;
  } catch (error) {
    if (error instanceof KitError) return error.kind;
    throw error;
  }
}

const fusing = [
  ErrorKind.Conflict,
  ErrorKind.Closed,
  ErrorKind.Unsupported,
  ErrorKind.NotYetImplemented,
  ErrorKind.Protocol,
  ErrorKind.InvalidState,
];

test.each(fusing)('S5.7/S5.8: %s is yielded once and fuses the receiver', async (kind) => {
  const receiver = ConversationNotificationReceiver.fromStream(
    source(item(1), new KitError(kind, 'source failed'), item(2)),
  );
  expect(await outcome(receiver)).toBe(1);
  expect(await outcome(receiver)).toBe(kind);
  expect(await outcome(receiver)).toBeNull();
  expect(await outcome(receiver)).toBeNull();
});

test.each([ErrorKind.Timeout, ErrorKind.Integration])('S5.7/S5.8: %s allows a later recv', async (kind) => {
  const receiver = ConversationNotificationReceiver.fromStream(
    source(new KitError(kind, 'transient'), item(1), new KitError(kind, 'again'), item(2)),
  );
  expect([
    await outcome(receiver),
    await outcome(receiver),
    await outcome(receiver),
    await outcome(receiver),
    await outcome(receiver),
  ]).toEqual([kind, 1, kind, 2, null]);
});

test('S5.8: end of the source fuses the receiver, as in the seed example', async () => {
  const receiver = ConversationNotificationReceiver.fromStream(source(item(1)));
  expect(await outcome(receiver)).toBe(1);
  expect(await outcome(receiver)).toBeNull();
  expect(await outcome(receiver)).toBeNull();
});

test('a source that throws yields the error as a KitError, then ends', async () => {
  async function* broken(): AsyncGenerator<ConversationNotification> {
    yield item(1);
    throw new Error('socket closed');
  }
  const receiver = ConversationNotificationReceiver.fromStream(broken());
  expect(await outcome(receiver)).toBe(1);
  expect(await outcome(receiver)).toBe(ErrorKind.Integration);
  expect(await outcome(receiver)).toBeNull();
});

test('S5.7: an aborted recv keeps the pending item for the next recv', async () => {
  let release!: () => void;
  const gate = new Promise<void>((resolve) => (release = resolve));
  async function* slow() {
    await gate;
    yield item(7);
  }
  const receiver = ConversationNotificationReceiver.fromStream(slow());
  const abort = new AbortController();
  const aborted = receiver.recv({ signal: abort.signal });
  abort.abort();
  await expect(aborted).rejects.toMatchObject({ kind: ErrorKind.Timeout });
  release();
  expect(await outcome(receiver)).toBe(7);
  expect(await outcome(receiver)).toBeNull();
});

test('concurrent recv calls are served one after another, never the same item twice', async () => {
  const receiver = ConversationNotificationReceiver.fromStream(source(item(1), item(2), item(3)));
  const seqs = await Promise.all([outcome(receiver), outcome(receiver), outcome(receiver)]);
  expect(seqs).toEqual([1, 2, 3]);
});
