// SPEC S3.9: authority is proven, not claimed. From a raw Temporal client, every forged sender, turn
// result, answer and settlement is refused and changes nothing: a forged thread end frees no slot, a
// forged turn end is not what wait returns, a forged or unrelated resolver cannot answer an approval,
// and a forged settlement does not erase it. The real answer, from the root's capability, still works.
import type { Client } from '@temporalio/client';
import { conversationSummary, resolveNotification } from '../../client/conversations';
import { kitCall } from '../../client/errors';
import type { Capability } from '../../domain/capability';
import { relatedId } from '../../domain/ids';
import { resolveInteractionUpdate } from '../../domain/messages';
import { attachRun, eventually, kitErrorOf, untilTurns } from '../helpers/runs';
import { threadEndReport, turnEndReport } from '../helpers/reports';
import { failedTasks, historyEvents } from '../helpers/task-answers';
import { connectTestTemporal, uniqueTaskQueue, type TestTemporal } from '../helpers/temporal';

let temporal: TestTemporal;
const taskQueue = uniqueTaskQueue('forged');
beforeAll(async () => {
  temporal = await connectTestTemporal();
  await temporal.startWorker({ taskQueue });
});
afterAll(async () => temporal?.close());

const signal = (client: Client, workflowId: string, name: string, payload: unknown) =>
  client.workflow.getHandle(workflowId).signal<[unknown]>(name, payload);

/** The first interaction of a conversation, as a reader with `capability` receives it. */
async function firstInteraction(conversationId: string, capability: Capability) {
  const { ConversationNotificationReceiver } = await import('../../client/conversation-receiver');
  const receiver = await ConversationNotificationReceiver.open(temporal.client, conversationId, {
    taskQueue,
    capability,
  });
  let interaction = await receiver.recv();
  while (interaction && interaction.body.type !== 'interaction') interaction = await receiver.recv();
  await receiver.dispose();
  if (interaction?.body.type !== 'interaction') throw new Error('no interaction');
  return { interaction, requestId: interaction.body.requestId };
}

const asksFirst = {
  type: 'scripted' as const,
  turns: [
    [
      { type: 'ask' as const, kind: 'approval' as const, prompt: 'may I?' },
      { type: 'reply' as const, text: 'answer was {{last}}' },
    ],
  ],
};

test('forged thread events free no slot and invent no turn that wait returns', async () => {
  const service = await attachRun(temporal.client, taskQueue, {
    grant: { owner: 'tests', maxConcurrent: 1 },
  });
  const root = service.rootControls();
  // The child waits for an approval: running, its turn not over.
  const child = await root.spawn({ task: 'wait for a person', name: 'waiter', kernel: asksFirst });
  await eventually(
    () => root.loadThread(child.id),
    (thread) => thread?.status === 'running',
    'the child running',
  );
  const forgedChild = {
    rootId: service.rootThreadId,
    threadId: child.id,
    lineage: [service.rootThreadId],
    proof: '1'.repeat(64),
  };
  await signal(temporal.client, service.rootThreadId, 'thread-event', threadEndReport(forgedChild, child.id));
  await signal(
    temporal.client,
    service.rootThreadId,
    'thread-event',
    turnEndReport(forgedChild, child.id, 1, 'forged'),
  );
  // A real child's capability may not report for another thread either.
  const childCapability = await service.capabilityOf(child.id);
  await signal(
    temporal.client,
    service.rootThreadId,
    'thread-event',
    threadEndReport(childCapability, service.rootThreadId),
  );

  expect((await kitErrorOf(root.spawn({ task: 'one too many' }))).kind).toBe('QuotaExceeded');
  const waited = await root.wait({ threadIds: [child.id], timeoutMs: 1_000 });
  expect(waited.timedOut).toBe(true);
  expect(waited.outcomes[0]).toMatchObject({ threadId: child.id, status: 'running' });
  expect(waited.outcomes[0]?.latestTurn).toBeUndefined();
  expect(await service.counters()).toMatchObject({ live: 1, total: 1 });
  expect((await service.refreshRoot()).status).not.toBe('completed');
  await service.shutdown();
}, 120_000);

test('forged and unrelated resolvers and a forged settlement leave the approval pending; the root answers it', async () => {
  const service = await attachRun(temporal.client, taskQueue);
  const root = service.rootControls();
  const asker = await root.spawn({ task: 'ask', name: 'asker', kernel: asksFirst });
  const sibling = await root.spawn({ task: 'stand by', name: 'sibling' });
  const pending = await eventually(
    () => conversationSummary(temporal.client, asker.conversationId),
    (summary) => summary.pendingInteractions === 1,
    'the approval to be published',
  );
  expect(pending.pendingInteractions).toBe(1);
  // The request id, from the asker's conversation as any reader sees it.
  const { interaction, requestId } = await firstInteraction(asker.conversationId, service.rootCapability);
  const approve = { type: 'approval' as const, approved: true };

  const forgedRoot = {
    rootId: service.rootThreadId,
    threadId: service.rootThreadId,
    lineage: [],
    proof: '2'.repeat(64),
  };
  const refusals = await Promise.all([
    kitErrorOf(resolveNotification(temporal.client, interaction, approve, { capability: forgedRoot })),
    kitErrorOf(
      resolveNotification(temporal.client, interaction, approve, {
        capability: await service.capabilityOf(sibling.id),
      }),
    ),
    // Without a capability, the thread's conversation refuses to resolve it itself.
    kitErrorOf(resolveNotification(temporal.client, interaction, approve)),
    // Sent past the client's checks, with a capability of another run.
    kitErrorOf(
      kitCall('resolve', async () =>
        temporal.client.workflow.getHandle(asker.id).executeUpdate(resolveInteractionUpdate, {
          args: [
            (await attachRun(temporal.client, taskQueue)).rootCapability,
            { requestId, answer: approve },
          ],
        }),
      ),
    ),
  ]);
  expect(refusals.map((error) => error.kind)).toEqual([
    'PermissionDenied',
    'PermissionDenied',
    'PermissionDenied',
    'PermissionDenied',
  ]);
  const resolution = {
    requestId,
    threadId: asker.id,
    conversationId: asker.conversationId,
    answer: approve,
    resolvedAt: new Date().toISOString(),
  };
  for (const conversationId of [asker.conversationId, relatedId('conversation', service.rootThreadId)]) {
    await signal(temporal.client, conversationId, 'interaction-settled', { resolution });
    await signal(temporal.client, conversationId, 'interaction-settled', { from: forgedRoot, resolution });
  }
  // A sibling's real capability may not settle another thread's conversation either, nor have it
  // settle the root's mirror; nor may a forged asker.
  for (const from of [await service.capabilityOf(sibling.id), { ...forgedRoot, threadId: asker.id }])
    for (const settleMirror of [undefined, true])
      await signal(temporal.client, asker.conversationId, 'interaction-settled', {
        from,
        resolution,
        ...(settleMirror ? { settleMirror } : {}),
      });
  const stillPending = await conversationSummary(temporal.client, asker.conversationId);
  expect(stillPending).toMatchObject({ pendingInteractions: 1, resolvedInteractions: 0 });
  expect((await root.loadThread(asker.id))?.turnsCompleted).toBe(0);

  const answered = await resolveNotification(temporal.client, interaction, approve, {
    capability: service.rootCapability,
    name: 'ops on call',
  });
  expect(answered).toMatchObject({
    requestId,
    threadId: asker.id,
    answer: approve,
    resolvedBy: { threadId: service.rootThreadId, name: 'ops on call' },
  });
  expect((await untilTurns(service, asker.id, 1)).latestTurn?.result).toBe('answer was approved');
  // Same answer again: the same resolution; another answer: Conflict.
  expect(
    await resolveNotification(temporal.client, interaction, approve, { capability: service.rootCapability }),
  ).toMatchObject({ requestId, resolvedAt: answered.resolvedAt });
  expect(
    (
      await kitErrorOf(
        resolveNotification(
          temporal.client,
          interaction,
          { type: 'approval', approved: false },
          { capability: service.rootCapability },
        ),
      )
    ).kind,
  ).toBe('Conflict');
  await eventually(
    () => conversationSummary(temporal.client, asker.conversationId),
    (summary) => summary.pendingInteractions === 0 && summary.resolvedInteractions === 1,
    'the answer settled in the asker conversation',
  );
  // The root's mirror is settled by the asker's conversation, which made it (SPEC S5.9): the asker
  // itself signals one settle, to its own conversation.
  const rootConversationId = relatedId('conversation', service.rootThreadId);
  await eventually(
    () => conversationSummary(temporal.client, rootConversationId),
    (summary) => summary.pendingInteractions === 0 && summary.resolvedInteractions === 1,
    'the mirror settled in the root conversation',
  );
  const settlesSent = async (workflowId: string) =>
    (await historyEvents(temporal.client, workflowId)).flatMap((event) => {
      const sent = event.signalExternalWorkflowExecutionInitiatedEventAttributes;
      return sent?.signalName === 'interaction-settled' ? [sent.workflowExecution?.workflowId] : [];
    });
  expect(await settlesSent(asker.id)).toEqual([asker.conversationId]);
  expect(await settlesSent(asker.conversationId)).toEqual([rootConversationId]);
  // The tree goes on: nothing forged touched its registry.
  expect((await root.listThreads()).map((thread) => thread.name).sort()).toEqual([
    'asker',
    'root',
    'sibling',
  ]);
  await service.shutdown();
}, 120_000);

test('a thread’s conversation is read, acknowledged and closed, and the thread watched, only with its own or an ancestor’s proof', async () => {
  const service = await attachRun(temporal.client, taskQueue);
  const root = service.rootControls();
  const target = await root.spawn({ task: 'say something', name: 'target' });
  const sibling = await root.spawn({ task: 'stand by', name: 'bystander' });
  const { conversationId } = target;
  await eventually(
    () => conversationSummary(temporal.client, conversationId),
    (summary) => summary.lastSeq >= 2,
    'the target to publish',
  );
  const before = await conversationSummary(temporal.client, conversationId);
  const { ConversationNotificationReceiver } = await import('../../client/conversation-receiver');
  const { closeConversation } = await import('../../client/conversations');
  const open = (capability?: Capability) =>
    ConversationNotificationReceiver.open(temporal.client, conversationId, {
      taskQueue,
      receiverId: 'the-reader',
      ...(capability ? { capability } : {}),
    });
  const update = (name: string, payload: unknown) =>
    kitCall(name, () =>
      temporal.client.workflow.getHandle(conversationId).executeUpdate(name, { args: [payload] }),
    );
  const forgedRoot = { ...service.rootCapability, proof: '3'.repeat(64) };
  const bystander = await service.capabilityOf(sibling.id);
  const otherRun = (await attachRun(temporal.client, taskQueue)).rootCapability;
  const refused = await Promise.all([
    kitErrorOf(open()),
    kitErrorOf(open(forgedRoot)),
    kitErrorOf(open(bystander)),
    kitErrorOf(open(otherRun)),
    kitErrorOf(update('open-receiver', { receiverId: 'raw', ttlMs: 1_000 })),
    kitErrorOf(update('close-conversation', {})),
    kitErrorOf(update('close-conversation', null)),
    kitErrorOf(closeConversation(temporal.client, conversationId, { capability: bystander })),
  ]);
  expect(refused.map((error) => error.kind)).toEqual(Array(8).fill('PermissionDenied'));
  expect(await conversationSummary(temporal.client, conversationId)).toEqual(before);
  // Watching the thread itself (a long-poll takes one of its few update slots) wants the proof too.
  const watch = (name: string, args: unknown[]) =>
    kitCall(name, () =>
      temporal.client.workflow.getHandle(target.id).executeUpdate(name, { args: args as [unknown] }),
    );
  const watchers = await Promise.all([
    kitErrorOf(watch('watch-thread', [0])),
    kitErrorOf(watch('watch-thread', [0, bystander])),
    kitErrorOf(watch('watch-thread', [0, forgedRoot])),
    kitErrorOf(watch('first-turn', [])),
    kitErrorOf(watch('first-turn', [otherRun])),
  ]);
  expect(watchers.map((error) => error.kind)).toEqual(Array(5).fill('PermissionDenied'));
  expect((await root.subscribeFirstTurn(target.id)).status).toBe('completed');

  // The thread itself may read its conversation, and so may its ancestors (the root).
  await (await open(await service.capabilityOf(target.id))).dispose();
  const reader = await open(service.rootCapability);
  expect((await reader.recv())?.seq).toBe(1);
  expect((await reader.recv())?.seq).toBe(2); // acknowledges seq 1
  // Knowing the lease holder's id is not enough: receive and release want the proof too.
  const asHolder = await Promise.all([
    kitErrorOf(update('receive', { receiverId: 'the-reader', afterSeq: 2, waitMs: 0 })),
    kitErrorOf(update('receive', { receiverId: 'the-reader', afterSeq: 2, waitMs: 0, from: bystander })),
    kitErrorOf(update('release-receiver', { receiverId: 'the-reader' })),
    kitErrorOf(update('open-receiver', { receiverId: 'the-reader', ttlMs: 100, renewOnly: true })),
  ]);
  expect(asHolder.map((error) => error.kind)).toEqual(Array(4).fill('PermissionDenied'));
  const held = await conversationSummary(temporal.client, conversationId);
  expect(held).toMatchObject({ acknowledgedThrough: 1, closed: false });
  expect(held.leaseHolder).not.toBeNull();
  await reader.dispose();
  expect(
    await closeConversation(temporal.client, conversationId, { capability: service.rootCapability }),
  ).toMatchObject({
    closed: true,
  });
  await service.shutdown();
}, 120_000);

test('another workflow of the tree answers by control request: a sibling’s, a misrouted and a wrong-kind answer change nothing; an ancestor’s wakes the asker', async () => {
  const service = await attachRun(temporal.client, taskQueue);
  const root = service.rootControls();
  const asker = await root.spawn({ task: 'ask', name: 'asker', kernel: asksFirst });
  const sibling = await root.spawn({ task: 'stand by', name: 'sibling' });
  await eventually(
    () => conversationSummary(temporal.client, asker.conversationId),
    (summary) => summary.pendingInteractions === 1,
    'the approval to be published',
  );
  const { interaction, requestId } = await firstInteraction(asker.conversationId, service.rootCapability);
  const approve = { type: 'approval' as const, approved: true };
  const ask = (from: Capability, operationId: string, operation: Record<string, unknown>) =>
    signal(temporal.client, asker.id, 'control-request', { from, operationId, operation });

  await ask(await service.capabilityOf(sibling.id), 'by-sibling', {
    type: 'resolve',
    threadId: asker.id,
    request: { requestId, answer: approve },
  });
  await ask(service.rootCapability, 'misrouted', {
    type: 'resolve',
    threadId: sibling.id,
    request: { requestId, answer: approve },
  });
  await ask(service.rootCapability, 'wrong-kind', {
    type: 'resolve',
    threadId: asker.id,
    request: { requestId, answer: { type: 'question', text: 'yes' } },
  });
  // The refusals went back to their senders; the asker still waits, its approval still pending.
  await eventually(
    () => historyEvents(temporal.client, asker.id),
    (events) => events.filter((event) => event.workflowExecutionSignaledEventAttributes).length >= 3,
    'the three requests to reach the asker',
  );
  expect(await conversationSummary(temporal.client, asker.conversationId)).toMatchObject({
    pendingInteractions: 1,
    resolvedInteractions: 0,
  });
  expect((await root.loadThread(asker.id))?.turnsCompleted).toBe(0);

  await ask(service.rootCapability, 'by-root', {
    type: 'resolve',
    threadId: asker.id,
    request: { requestId, answer: approve, name: 'the root agent' },
  });
  expect((await untilTurns(service, asker.id, 1)).latestTurn?.result).toBe('answer was approved');
  await eventually(
    () => conversationSummary(temporal.client, asker.conversationId),
    (summary) => summary.pendingInteractions === 0 && summary.resolvedInteractions === 1,
    'the answer settled in the asker conversation',
  );
  // The client's update now finds it answered by the root, with the same answer.
  expect(
    await resolveNotification(temporal.client, interaction, approve, { capability: service.rootCapability }),
  ).toMatchObject({ requestId, resolvedBy: { threadId: service.rootThreadId, name: 'the root agent' } });
  expect(failedTasks(await historyEvents(temporal.client, asker.id))).toEqual([]);
  await service.shutdown();
}, 120_000);
