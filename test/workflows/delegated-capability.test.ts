// SPEC S3.9: a thread's capability that the backend hands a service (`capabilityOf`) acts as that thread
// in every control operation, and proves nothing more: what only the thread's own workflow tells the tree
// — its turns' and its end's reports, budget charges, control answers, settlements — is dropped when it
// comes with it. Before, a service holding a sub-agent's capability could report the agent ended (its
// slot freed past maxConcurrent, its workflow left running by shutdown), invent its turn results, burn
// the tree's budget with one charge, and settle a sibling's approval in the root's conversation.
import type { Client } from '@temporalio/client';
import { ThreadControls } from '../../client/thread-controls';
import { conversationSummary, resolveNotification } from '../../client/conversations';
import { ConversationNotificationReceiver } from '../../client/conversation-receiver';
import { mintCapability } from '../../domain/capability';
import { relatedId } from '../../domain/ids';
import { attachRun, eventually, idleAgent, kitErrorOf, untilClosed, untilTurns } from '../helpers/runs';
import { threadEndReport, turnEndReport } from '../helpers/reports';
import { failedTasks, historyEvents } from '../helpers/task-answers';
import { connectTestTemporal, uniqueTaskQueue, type TestTemporal } from '../helpers/temporal';

let temporal: TestTemporal;
const taskQueue = uniqueTaskQueue('delegated');
beforeAll(async () => {
  temporal = await connectTestTemporal();
  await temporal.startWorker({ taskQueue });
});
afterAll(async () => temporal?.close());

const signal = (client: Client, workflowId: string, name: string, payload: unknown) =>
  client.workflow.getHandle(workflowId).signal<[unknown]>(name, payload);

test("a delegated capability acts as its thread but cannot report the thread's end, turns or charges", async () => {
  const service = await attachRun(temporal.client, taskQueue, {
    grant: { owner: 'tests', maxConcurrent: 2, budgetTokens: 1_000_000 },
  });
  const root = service.rootControls();
  const b = await root.spawn(idleAgent('b'));
  const c = await root.spawn(idleAgent('c'));
  await untilTurns(service, b.id, 1);
  await untilTurns(service, c.id, 1);
  const capB = await service.capabilityOf(b.id);
  const capC = await service.capabilityOf(c.id);
  const before = await service.counters();
  expect(before.live).toBe(2);

  // It acts as b through the control API: a message from b to the root is b's.
  const sent = await new ThreadControls(service.handle, capB).sendMessage({
    recipient: service.rootThreadId,
    content: 'from the service acting as b',
  });
  expect(sent.sender).toBe(b.id);

  await signal(temporal.client, service.rootThreadId, 'thread-event', threadEndReport(capB, b.id));
  await signal(
    temporal.client,
    service.rootThreadId,
    'thread-event',
    turnEndReport(capC, c.id, 7, 'FORGED RESULT'),
  );
  await signal(temporal.client, service.rootThreadId, 'control-request', {
    from: capB,
    operationId: `${b.id}/999`,
    operation: { type: 'charge', tokens: 5_000_000 },
  });
  // A real message after them: once it is in, the signals before it have been handled.
  await root.sendMessage({ recipient: b.id, content: 'still yours', triggerTurn: true });
  await untilTurns(service, b.id, 2);

  const after = await service.counters();
  expect(after.live).toBe(2);
  expect(after.tokens).toBe(before.tokens);
  expect((await root.loadThread(b.id))?.status).toBe('idle');
  expect((await root.loadThread(c.id))?.latestTurn).toMatchObject({ turn: 1, result: 'done' });
  expect((await kitErrorOf(root.spawn(idleAgent('third')))).kind).toBe('QuotaExceeded');
  expect(failedTasks(await historyEvents(temporal.client, service.rootThreadId))).toEqual([]);

  // Shutdown still finds both live, and ends both workflows.
  const report = await service.shutdown();
  expect([...report.cancelled].sort()).toEqual([b.id, c.id].sort());
  await untilClosed(temporal.client, b.id);
  await untilClosed(temporal.client, c.id);
});

test("neither a sibling nor a delegated capability settles a thread's approval in the root's conversation", async () => {
  const service = await attachRun(temporal.client, taskQueue);
  const root = service.rootControls();
  const asker = await root.spawn({
    name: 'asker',
    task: 'ask first',
    kernel: { type: 'scripted', turns: [[{ type: 'ask', kind: 'approval', prompt: 'may I?' }]] },
  });
  const sibling = await root.spawn(idleAgent('sibling'));
  await untilTurns(service, sibling.id, 1);
  const rootConversation = relatedId('conversation', service.rootThreadId);
  const pending = await eventually(
    () => conversationSummary(temporal.client, rootConversation),
    (summary) => summary.pendingInteractions === 1,
    'the approval mirrored at the root',
  );
  const receiver = await ConversationNotificationReceiver.open(temporal.client, asker.conversationId, {
    taskQueue,
    capability: service.rootCapability,
  });
  let item = await receiver.recv();
  while (item && item.body.type !== 'interaction') item = await receiver.recv();
  await receiver.dispose();
  if (item?.body.type !== 'interaction') throw new Error('no interaction');

  const delegatedSibling = await service.capabilityOf(sibling.id);
  const workflowSibling = mintCapability(
    service.capability,
    delegatedSibling.rootId,
    delegatedSibling.lineage,
    sibling.id,
  );
  const delegatedAsker = await service.capabilityOf(asker.id);
  const resolution = {
    requestId: item.body.requestId,
    threadId: asker.id,
    conversationId: asker.conversationId,
    answer: { type: 'approval', approved: false, reason: 'forged' },
    resolvedAt: new Date().toISOString(),
    resolvedBy: { threadId: service.rootThreadId, name: 'the boss' },
  };
  for (const from of [delegatedSibling, workflowSibling, delegatedAsker]) {
    await signal(temporal.client, rootConversation, 'interaction-settled', { from, resolution });
    await signal(temporal.client, asker.conversationId, 'interaction-settled', {
      from,
      resolution,
      settleMirror: true,
    });
  }
  // The real answer, at the thread that asked, settles both: had a forgery landed first, the record
  // would keep the forged denial and its made-up resolver.
  await resolveNotification(
    temporal.client,
    item,
    { type: 'approval', approved: true },
    { capability: service.rootCapability, name: 'operator' },
  );
  const settled = await eventually(
    () => conversationSummary(temporal.client, rootConversation),
    (summary) => summary.pendingInteractions === 0,
    'the approval settled by its real answer',
  );
  expect(settled.resolvedInteractions).toBe(pending.resolvedInteractions + 1);
  const reader = await ConversationNotificationReceiver.open(temporal.client, rootConversation, {
    taskQueue,
    capability: service.rootCapability,
  });
  let record = await reader.recv();
  while (record && !(record.body.type === 'status' && record.body.event === 'interaction-resolved'))
    record = await reader.recv();
  await reader.dispose();
  expect(record?.body).toMatchObject({ threadId: asker.id });
  const detail = record?.body.type === 'status' ? record.body.detail : '';
  expect(detail).toContain(`${item.body.requestId} approved by ${service.rootThreadId} (operator)`);
  expect(detail).not.toContain('forged');
  expect(failedTasks(await historyEvents(temporal.client, rootConversation))).toEqual([]);
  await service.shutdown();
});

test('a receiver with a capability opens only a conversation that exists or whose thread does', async () => {
  const service = await attachRun(temporal.client, taskQueue);
  // A mistyped id: nothing of the tree has it. Before, the receiver started a conversation nobody
  // writes to, which never ended.
  const typo = `conversation_${'7'.repeat(32)}`;
  const refused = await kitErrorOf(
    ConversationNotificationReceiver.open(temporal.client, typo, {
      taskQueue,
      capability: service.rootCapability,
    }),
  );
  expect(`${refused.kind}: ${refused.message}`).toBe(
    `NotFound: open a receiver on ${typo}: no conversation ${typo}, and no thread thread_${'7'.repeat(32)} it would belong to: check the id`,
  );
  await expect(temporal.client.workflow.getHandle(typo).describe()).rejects.toThrow(/not found/i);
  // The root's own conversation opens as before.
  const receiver = await ConversationNotificationReceiver.open(
    temporal.client,
    relatedId('conversation', service.rootThreadId),
    { taskQueue, capability: service.rootCapability },
  );
  await receiver.dispose();
  await service.shutdown();
});
