import { temporal as proto } from '@temporalio/proto';
import { ConversationNotificationReceiver } from '../../client/conversation-receiver';
import {
  closeConversation,
  conversationHandle,
  conversationSummary,
  publishNotifications,
  publishNotificationsWithReceipt,
} from '../../client/conversations';
import { fingerprint } from '../../domain/bytes';
import {
  conversationSummaryQuery,
  openReceiverUpdate,
  releaseReceiverUpdate,
} from '../../domain/conversation-messages';
import { ErrorKind, KitError } from '../../domain/errors';
import { conversationStartOperation } from '../../client/conversations';
import {
  approvalBody,
  label,
  messageBody,
  newConversation,
  openWhenLeaseFree,
  receiveMany,
} from '../helpers/conversations';
import { suiteWorker, type TestTemporal } from '../helpers/temporal';

let temporal: TestTemporal;
const { taskQueue, started } = suiteWorker('conversation', (connected) => (temporal = connected));

function conversation() {
  const ids = newConversation();
  started.push(ids.conversationId);
  return ids;
}

const publish = (conversationId: string, ...texts: string[]) =>
  publishNotifications(
    temporal.client,
    conversationId,
    texts.map((text) => ({ body: messageBody(text) })),
    { taskQueue },
  );

const open = (conversationId: string, options: { ttlMs?: number; receiverId?: string } = {}) =>
  ConversationNotificationReceiver.open(temporal.client, conversationId, { taskQueue, ...options });

async function errorOf(promise: Promise<unknown>): Promise<KitError> {
  const error = await promise.then(
    () => undefined,
    (thrown: unknown) => thrown,
  );
  if (!(error instanceof KitError)) throw new Error(`expected a KitError, got ${String(error)}`);
  return error;
}

test('S5.3: a second live receiver gets Conflict; after the first is disposed it opens', async () => {
  const { conversationId } = conversation();
  const first = await open(conversationId);
  const conflict = await errorOf(open(conversationId));
  expect(conflict.kind).toBe(ErrorKind.Conflict);
  await first.dispose();
  const second = await open(conversationId, { receiverId: 'receiver-second' });
  // The summary names the holder by a fingerprint only: the id itself would let anyone receive as it.
  const summary = await conversationSummary(temporal.client, conversationId);
  expect(summary.leaseHolder).toBe(fingerprint('receiver-second'));
  expect(JSON.stringify(summary)).not.toContain('receiver-second');
  await second.dispose();
});

test('S5.3: the lease of a vanished receiver expires and is taken over', async () => {
  const { conversationId } = conversation();
  // A holder that never renews: the lease taken by a bare update, as by a process that died.
  await temporal.client.workflow.executeUpdateWithStart(openReceiverUpdate, {
    args: [{ receiverId: 'vanished', ttlMs: 500 }],
    startWorkflowOperation: conversationStartOperation(conversationId, { taskQueue }),
  });
  expect((await errorOf(open(conversationId))).kind).toBe(ErrorKind.Conflict);
  const successor = await openWhenLeaseFree(temporal.client, conversationId, { taskQueue });
  const summary = await conversationSummary(temporal.client, conversationId);
  expect(summary.leaseHolder).not.toBeNull();
  expect(summary.leaseHolder).not.toBe(fingerprint('vanished'));
  await expect(
    temporal.client.workflow.getHandle(conversationId).query(conversationSummaryQuery),
  ).resolves.toMatchObject({ leaseHolder: summary.leaseHolder });
  await successor.dispose();
});

test('S5.2/S5.4: items arrive in order; receiving the next acknowledges the previous passive item', async () => {
  const { conversationId } = conversation();
  await publish(conversationId, 'a', 'b', 'c');
  await using receiver = await open(conversationId);
  expect(label(await receiver.recv())).toBe('a');
  expect(label(await receiver.recv())).toBe('b');
  const summary = await conversationSummary(temporal.client, conversationId);
  expect(summary).toMatchObject({ lastSeq: 3, acknowledgedThrough: 1, backlogSize: 2 });
});

test('S5.5: a receiver disposed after item k lets the next receiver receive k again', async () => {
  const { conversationId } = conversation();
  await publish(conversationId, 'a', 'b', 'c');
  const first = await open(conversationId);
  expect((await receiveMany(first, 2)).map(label)).toEqual(['a', 'b']);
  await first.dispose();
  await using second = await open(conversationId);
  expect((await receiveMany(second, 2)).map(label)).toEqual(['b', 'c']);
});

test('S5.4: an interaction is redelivered to each new receiver until resolved', async () => {
  const { conversationId, threadId } = conversation();
  const interaction = approvalBody(threadId);
  await publishNotifications(
    temporal.client,
    conversationId,
    [{ body: interaction }, { body: messageBody('after') }],
    { taskQueue },
  );
  const first = await open(conversationId);
  expect((await receiveMany(first, 2)).map(label)).toEqual(['interaction', 'after']);
  await publish(conversationId, 'later');
  expect(label(await first.recv())).toBe('later'); // acknowledges 'after', not the interaction
  await first.dispose();
  await using second = await open(conversationId);
  expect((await receiveMany(second, 2)).map(label)).toEqual(['interaction', 'later']);
  const summary = await conversationSummary(temporal.client, conversationId);
  expect(summary).toMatchObject({ pendingInteractions: 1 });
});

test('S5.6: close makes the receiver drain-only, then end-of-stream; later publishing is refused', async () => {
  const { conversationId } = conversation();
  await publish(conversationId, 'a', 'b');
  const receiver = await open(conversationId);
  expect(label(await receiver.recv())).toBe('a');
  expect(await closeConversation(temporal.client, conversationId)).toEqual({
    closed: true,
    backlogSize: 2,
  });
  const refused = await errorOf(
    publishNotificationsWithReceipt(temporal.client, conversationId, [{ body: messageBody('late') }], {
      taskQueue,
    }),
  );
  expect(refused.kind).toBe(ErrorKind.Closed);
  await publish(conversationId, 'late, fire-and-forget');
  expect(label(await receiver.recv())).toBe('b');
  expect(await receiver.recv()).toBeNull();
  expect(await receiver.recv()).toBeNull();
  const summary = await conversationSummary(temporal.client, conversationId);
  expect(summary).toMatchObject({ closed: true, refusedAfterClose: 2, lastSeq: 2, backlogSize: 0 });
  await receiver.dispose();
});

test('S5.7: a receiver whose lease was taken over gets Conflict once, then end-of-stream', async () => {
  const { conversationId } = conversation();
  await publish(conversationId, 'a');
  const receiver = await open(conversationId, { receiverId: 'first-holder' });
  expect(label(await receiver.recv())).toBe('a');
  await conversationHandle(temporal.client, conversationId).executeUpdate(releaseReceiverUpdate, {
    args: [{ receiverId: 'first-holder' }],
  });
  await using successor = await open(conversationId);
  await publish(conversationId, 'b');
  expect((await errorOf(receiver.recv())).kind).toBe(ErrorKind.Conflict);
  expect(await receiver.recv()).toBeNull();
  expect((await receiveMany(successor, 2)).map(label)).toEqual(['a', 'b']);
  await receiver.dispose();
});

test('S5.7: a recv aborted while waiting loses no item; the next recv gets it', async () => {
  const { conversationId } = conversation();
  await using receiver = await open(conversationId);
  const abort = new AbortController();
  const waiting = receiver.recv({ signal: abort.signal });
  abort.abort();
  const aborted = await errorOf(waiting);
  expect(aborted.kind).toBe(ErrorKind.Timeout);
  await publish(conversationId, 'first', 'second');
  expect(label(await receiver.recv())).toBe('first');
  expect(label(await receiver.recv())).toBe('second');
});

test('the async iterator yields every item until end-of-stream', async () => {
  const { conversationId } = conversation();
  await publish(conversationId, 'a', 'b', 'c');
  await closeConversation(temporal.client, conversationId);
  const labels: string[] = [];
  await using receiver = await open(conversationId);
  for await (const notification of receiver) labels.push(label(notification));
  expect(labels).toEqual(['a', 'b', 'c']);
});

test('long-polls that items answer share one timer; a poll nothing answers still ends at its deadline', async () => {
  const { conversationId } = conversation();
  await using receiver = await ConversationNotificationReceiver.open(temporal.client, conversationId, {
    taskQueue,
    pollWaitMs: 1500,
  });
  const pause = (ms: number) => new Promise((done) => setTimeout(done, ms));
  const startedAt = Date.now();
  for (const text of ['one', 'two', 'three', 'four']) {
    const received = receiver.recv();
    await pause(150); // the poll is waiting in the workflow
    await publish(conversationId, text);
    expect(label(await received)).toBe(text);
  }
  // Longer than a poll waits: the poll ends empty at its deadline and the receiver polls again.
  const received = receiver.recv();
  await pause(2500);
  await publish(conversationId, 'five');
  expect(label(await received)).toBe('five');
  const { EventType } = proto.api.enums.v1;
  const types = ((await conversationHandle(temporal.client, conversationId).fetchHistory()).events ?? []).map(
    (event) => event.eventType,
  );
  const count = (type: number) => types.filter((candidate) => candidate === type).length;
  expect(count(EventType.EVENT_TYPE_TIMER_CANCELED)).toBe(0);
  const fired = count(EventType.EVENT_TYPE_TIMER_FIRED);
  expect(fired).toBeGreaterThanOrEqual(1);
  // A timer starts only once the one before has fired (at most one is left waiting), and at most one
  // per poll deadline that passed: six polls share them (on a loaded machine the polls take longer,
  // so more deadlines pass; the bound follows the time they took).
  const started = count(EventType.EVENT_TYPE_TIMER_STARTED);
  expect(started).toBeLessThanOrEqual(fired + 1);
  expect(started).toBeLessThanOrEqual(Math.ceil((Date.now() - startedAt) / 1500) + 1);
});
