// SPEC S5.10: a thread's conversation outlives its thread, but not forever: once the thread has ended,
// it completes when its backlog has been read and acknowledged to the end, or when the grant's retention
// period has passed. Resolved interactions stay in the record, with their answer, who and when.
import { ConversationNotificationReceiver } from '../../client/conversation-receiver';
import { publishNotificationsWithReceipt, resolveNotification } from '../../client/conversations';
import { randomUUID } from 'node:crypto';
import { ErrorKind } from '../../domain/errors';
import { newId, relatedId } from '../../domain/ids';
import type { ConversationNotification } from '../../domain/schemas';
import { attachRun, eventually, kitErrorOf, untilTurns, writerPastHighWater } from '../helpers/runs';
import { patchesOf } from '../helpers/histories';
import { connectTestTemporal, uniqueTaskQueue, type TestTemporal } from '../helpers/temporal';

let temporal: TestTemporal;
const taskQueue = uniqueTaskQueue('retention');
beforeAll(async () => {
  temporal = await connectTestTemporal();
  await temporal.startWorker({ taskQueue });
});
afterAll(async () => temporal?.close());

const statusOf = async (workflowId: string) =>
  (await temporal.client.workflow.getHandle(workflowId).describe()).status.name;

test('a finished thread’s conversation completes once it has been read to the end; the answer stays in the record', async () => {
  const service = await attachRun(temporal.client, taskQueue);
  const root = service.rootControls();
  const asker = await root.spawn({
    task: 'ask, then finish',
    name: 'asker',
    kernel: {
      type: 'scripted',
      turns: [
        [
          { type: 'ask', kind: 'approval', prompt: 'ship it?' },
          { type: 'reply', text: 'answer was {{last}}' },
        ],
      ],
    },
  });
  const receiver = await ConversationNotificationReceiver.open(temporal.client, asker.conversationId, {
    taskQueue,
    capability: service.rootCapability,
    pollWaitMs: 1_000,
  });
  const seen: ConversationNotification[] = [];
  const next = async () => {
    const item = await receiver.recv();
    if (item) seen.push(item);
    return item;
  };
  let interaction = await next();
  while (interaction && interaction.body.type !== 'interaction') interaction = await next();
  await resolveNotification(
    temporal.client,
    interaction!,
    { type: 'approval', approved: true },
    { capability: service.rootCapability, name: 'release manager' },
  );
  expect((await untilTurns(service, asker.id, 1)).latestTurn?.result).toBe('answer was approved');
  await root.close(asker.id);
  // Read to the end: the audit record of the answer, then the thread's end.
  for (;;) {
    const item = await next();
    if (!item || (item.body.type === 'status' && item.body.event === 'thread-end')) break;
  }
  const audit = seen.find(
    (item) => item.body.type === 'status' && item.body.event === 'interaction-resolved',
  );
  expect(audit?.body).toMatchObject({ type: 'status', threadId: asker.id });
  expect(audit?.body.type === 'status' && audit.body.detail).toMatch(
    new RegExp(`approved by ${service.rootThreadId} \\(release manager\\) at `),
  );
  // The thread's end closed the stream: the next receive is its end, which acknowledges the last item,
  // so nothing is left and the conversation completes.
  expect(await receiver.recv()).toBeNull();
  await eventually(
    () => statusOf(asker.conversationId),
    (status) => status === 'COMPLETED',
    'the conversation to complete',
  );
  expect(await receiver.recv()).toBeNull();
  await receiver.dispose();
  await service.shutdown();
}, 120_000);

test('nobody reads it: the conversation of a finished thread completes when the retention period has passed', async () => {
  const service = await attachRun(temporal.client, taskQueue, {
    grant: { owner: 'tests', conversationRetentionMs: 2_000 },
  });
  const root = service.rootControls();
  const child = await root.spawn({ task: 'say hi', name: 'quiet' });
  await untilTurns(service, child.id, 1);
  expect(await statusOf(child.conversationId)).toBe('RUNNING');
  await root.close(child.id);
  await eventually(
    () => statusOf(child.conversationId),
    (status) => status === 'COMPLETED',
    'the unread conversation to complete after its retention period',
  );
  // Its history stays in the namespace: the backlog can still be inspected there.
  const history = await temporal.client.workflow.getHandle(child.conversationId).fetchHistory();
  expect(history.events?.length).toBeGreaterThan(3);
  await service.shutdown();
}, 120_000);

test('nobody reads it and it was paged: once its retention has passed, its page workflows end with it', async () => {
  const service = await attachRun(temporal.client, taskQueue, {
    grant: { owner: 'tests', conversationRetentionMs: 2_000 },
  });
  const root = service.rootControls();
  const writer = await writerPastHighWater(service);
  // The root learns a turn ended before its reply reaches the conversation (two signals, in any order):
  // the page is cut once the conversation has taken the replies.
  const pageIds = async () =>
    (await temporal.client.workflow.getHandle(writer.conversationId).fetchHistory()).events
      ?.map((event) => event.startChildWorkflowExecutionInitiatedEventAttributes?.workflowId)
      .filter((id): id is string => id !== undefined && id !== null) ?? [];
  const pages = await eventually(pageIds, (ids) => ids.length > 0, 'a page workflow of the conversation');
  expect(pages.length).toBeGreaterThan(0);
  await root.close(writer.id);
  await eventually(
    () => statusOf(writer.conversationId),
    (status) => status === 'COMPLETED',
    'the unread conversation to complete after its retention period',
  );
  for (const page of pages)
    expect([
      page,
      await eventually(
        () => statusOf(page),
        (status) => status !== 'RUNNING',
        `${page} to end`,
      ),
    ]).toEqual([page, 'CANCELLED']);
  const history = await temporal.client.workflow.getHandle(writer.conversationId).fetchHistory();
  expect(patchesOf(history.events ?? [])).toContain('retiredPagesEnd');
  await service.shutdown();
}, 180_000);

test('a receiver that starts a thread’s conversation before the thread does leaves it to the thread: it claims it', async () => {
  // The root's id is known before attach, so its conversation can be opened first, owner-less.
  const rootThreadId = newId('thread', randomUUID);
  const conversationId = relatedId('conversation', rootThreadId);
  const early = await ConversationNotificationReceiver.open(temporal.client, conversationId, {
    taskQueue,
    pollWaitMs: 1_000,
  });
  const service = await attachRun(temporal.client, taskQueue, { rootThreadId });
  // The root claimed it: the lease taken without proof ends, and so does that receiver (SPEC S3.9).
  const cutOff = await kitErrorOf(
    (async () => {
      for (;;) await early.recv();
    })(),
  );
  expect([ErrorKind.PermissionDenied, ErrorKind.Conflict]).toContain(cutOff.kind);
  expect(await early.recv()).toBeNull();
  await expect(
    ConversationNotificationReceiver.open(temporal.client, conversationId, { taskQueue }),
  ).rejects.toMatchObject({ kind: ErrorKind.PermissionDenied });
  // With the root's capability a receiver opens at once and gets the root's own notifications.
  await using proven = await ConversationNotificationReceiver.open(temporal.client, conversationId, {
    taskQueue,
    capability: service.rootCapability,
    pollWaitMs: 1_000,
  });
  let item = await proven.recv();
  while (item && item.body.type !== 'status') item = await proven.recv();
  expect(item?.body).toMatchObject({ type: 'status', threadId: rootThreadId });
  // A publish without its proof is refused.
  expect(
    (
      await kitErrorOf(
        publishNotificationsWithReceipt(
          temporal.client,
          conversationId,
          [{ body: { type: 'message', text: 'forged' } }],
          { taskQueue },
        ),
      )
    ).kind,
  ).toBe(ErrorKind.PermissionDenied);
  await early.dispose();
  await service.shutdown();
}, 120_000);
