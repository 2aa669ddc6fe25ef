import { mintCapability } from '../../domain/capability';
import { randomUUID } from 'node:crypto';
import { z } from 'zod';
import { ConversationNotificationReceiver } from '../../client/conversation-receiver';
import { conversationSummary, resolveNotification } from '../../client/conversations';
import { createActivities, defineTool } from '../../activities';
import { newId, relatedId } from '../../domain/ids';
import type { ConversationNotification } from '../../domain/schemas';
import { attachRun, eventually, untilTurns } from '../helpers/runs';
import {
  providerFor,
  startOpenAIServer,
  toolResultsOf,
  type ReceivedRequest,
  type Reply,
} from '../helpers/openai-server';
import { connectTestTemporal, uniqueTaskQueue, type TestTemporal } from '../helpers/temporal';

let temporal: TestTemporal;
let server: Awaited<ReturnType<typeof startOpenAIServer>>;
let policy: (request: ReceivedRequest) => Reply = () => ({ text: 'unset' });
const taskQueue = uniqueTaskQueue('interactions');
const deployments: string[] = [];
const deploy = defineTool({
  name: 'deploy',
  description: 'Deploys a service. Needs a person to approve.',
  input: z.object({ service: z.string() }).strict(),
  needsApproval: true,
  run: async ({ service }) => {
    deployments.push(service);
    return `deployed ${service}`;
  },
});

beforeAll(async () => {
  server = await startOpenAIServer((request) => policy(request));
  temporal = await connectTestTemporal();
  const model = providerFor(server.url, 'm');
  await temporal.startWorker({ taskQueue, activities: createActivities({ model, tools: [deploy] }) });
});
afterAll(async () => {
  await temporal?.close();
  await server?.close();
});

/** Receives from a conversation until an interaction shows up (passive items are acknowledged on the way). */
async function nextInteraction(
  receiver: ConversationNotificationReceiver,
): Promise<ConversationNotification> {
  for (;;) {
    const item = await receiver.recv();
    if (!item) throw new Error('the conversation ended before an interaction arrived');
    if (item.body.type === 'interaction') return item;
  }
}

test('a child at depth 2 asks for approval; a receiver on the root conversation resolves it and the child continues', async () => {
  const service = await attachRun(temporal.client, taskQueue);
  const lead = await service.rootControls().spawn({
    task: 'lead',
    name: 'lead',
    kernel: {
      type: 'scripted',
      turns: [
        [
          {
            type: 'spawn',
            as: 'w',
            request: {
              task: 'ask first',
              name: 'asker',
              kernel: {
                type: 'scripted',
                turns: [
                  [
                    { type: 'ask', kind: 'approval', prompt: 'May I delete the cache?' },
                    { type: 'reply', text: 'answer was {{last}}' },
                  ],
                ],
              },
            },
          },
          { type: 'reply', text: 'spawned' },
        ],
      ],
    },
  });
  const root = await service.refreshRoot();
  await using receiver = await ConversationNotificationReceiver.open(temporal.client, root.conversationId, {
    taskQueue,
    capability: service.rootCapability,
  });
  const interaction = await nextInteraction(receiver);
  expect(interaction.body).toMatchObject({
    type: 'interaction',
    kind: 'approval',
    prompt: 'May I delete the cache?',
  });
  const asker = (await service.rootControls().listThreads()).find((thread) => thread.name === 'asker')!;
  expect(asker).toMatchObject({ depth: 2, parentId: lead.id });
  expect(interaction.body.type === 'interaction' && interaction.body.threadId).toBe(asker.id);
  await resolveNotification(
    temporal.client,
    interaction,
    { type: 'approval', approved: true },
    { capability: service.rootCapability },
  );
  expect((await untilTurns(service, asker.id, 1)).latestTurn?.result).toBe('answer was approved');
  // The interaction is settled in both conversations: nobody is offered it again.
  expect((await conversationSummary(temporal.client, asker.conversationId)).pendingInteractions).toBe(0);
});

test('an unanswered interaction times out as denied', async () => {
  const service = await attachRun(temporal.client, taskQueue, {
    grant: { owner: 'tests', interactionTimeoutMs: 1500 },
  });
  const asker = await service.rootControls().spawn({
    task: 'ask nobody',
    kernel: {
      type: 'scripted',
      turns: [
        [
          { type: 'ask', kind: 'approval', prompt: 'Anyone there?' },
          { type: 'reply', text: '{{last}}' },
        ],
      ],
    },
  });
  expect((await untilTurns(service, asker.id, 1)).latestTurn?.result).toBe('denied: timed out unanswered');
  // The asker's conversation settles the root's mirror it made (SPEC S5.9).
  const rootConversation = (await service.refreshRoot()).conversationId;
  await eventually(
    () => conversationSummary(temporal.client, rootConversation),
    (summary) => summary.pendingInteractions === 0 && summary.resolvedInteractions === 1,
    'the mirror settled as denied',
  );
});

test('an unanswered question times out and is settled in both conversations with no answer', async () => {
  const service = await attachRun(temporal.client, taskQueue, {
    grant: { owner: 'tests', interactionTimeoutMs: 1500 },
  });
  const asker = await service.rootControls().spawn({
    task: 'ask nobody a question',
    kernel: {
      type: 'scripted',
      turns: [
        [
          { type: 'ask', kind: 'question', prompt: 'Which region?' },
          { type: 'reply', text: 'answer: [{{last}}]' },
        ],
      ],
    },
  });
  expect((await untilTurns(service, asker.id, 1)).latestTurn?.result).toBe('answer: []');
  const rootConversation = (await service.refreshRoot()).conversationId;
  for (const conversationId of [asker.conversationId, rootConversation])
    await eventually(
      () => conversationSummary(temporal.client, conversationId),
      (summary) => summary.pendingInteractions === 0 && summary.resolvedInteractions === 1,
      `the question settled unanswered in ${conversationId}`,
    );
});

test('an interaction whose turn is interrupted is settled as denied: no receiver is offered it, a late answer gets that resolution', async () => {
  const service = await attachRun(temporal.client, taskQueue, {});
  const asker = await service.rootControls().spawn({
    task: 'ask and be interrupted',
    kernel: {
      type: 'scripted',
      turns: [
        [
          { type: 'ask', kind: 'approval', prompt: 'May I?' },
          { type: 'reply', text: '{{last}}' },
        ],
      ],
    },
  });
  const rootConversation = (await service.refreshRoot()).conversationId;
  await using receiver = await ConversationNotificationReceiver.open(temporal.client, rootConversation, {
    taskQueue,
    capability: service.rootCapability,
  });
  const interaction = await nextInteraction(receiver);
  expect((await service.rootControls().interrupt(asker.id)).cancellationRequested).toBe(true);
  expect((await untilTurns(service, asker.id, 1)).latestTurn?.status).toBe('interrupted');
  await eventually(
    () => conversationSummary(temporal.client, rootConversation),
    (summary) => summary.pendingInteractions === 0,
    'the interrupted interaction settled',
  );
  const late = await resolveNotification(
    temporal.client,
    interaction,
    { type: 'approval', approved: false, reason: 'the turn was interrupted before an answer' },
    { capability: service.rootCapability },
  );
  expect(late.answer).toEqual({
    type: 'approval',
    approved: false,
    reason: 'the turn was interrupted before an answer',
  });
  expect(late.resolvedBy).toBeUndefined();
});

test('a settle that reaches the asker’s conversation after its thread’s end closed it still settles the root’s mirror', async () => {
  const service = await attachRun(temporal.client, taskQueue);
  const asker = await service.rootControls().spawn({
    task: 'ask and wait',
    kernel: { type: 'scripted', turns: [[{ type: 'ask', kind: 'approval', prompt: 'May I?' }]] },
  });
  const rootConversation = relatedId('conversation', service.rootThreadId);
  await eventually(
    () => conversationSummary(temporal.client, rootConversation),
    (summary) => summary.pendingInteractions === 1,
    'the mirror at the root',
  );
  const receiver = await ConversationNotificationReceiver.open(temporal.client, asker.conversationId, {
    taskQueue,
    capability: service.rootCapability,
  });
  const interaction = await nextInteraction(receiver);
  await receiver.dispose();
  if (interaction.body.type !== 'interaction') throw new Error('not an interaction');
  // Two signals of one task of the thread may arrive in either order: its end first, then its settle.
  // Sent here as the thread's own workflow sends them: with its workflow capability, not a delegated one.
  const delegated = await service.capabilityOf(asker.id);
  const owner = mintCapability(service.capability, delegated.rootId, delegated.lineage, delegated.threadId);
  const conversation = temporal.client.workflow.getHandle(asker.conversationId);
  const at = new Date().toISOString();
  await conversation.signal<[unknown]>('publish', {
    from: owner,
    notifications: [
      {
        id: newId('notification', randomUUID),
        createdAt: at,
        body: { type: 'status', event: 'thread-end', threadId: asker.id, detail: 'cancelled' },
      },
    ],
  });
  await eventually(
    () => conversationSummary(temporal.client, asker.conversationId),
    (summary) => summary.closed,
    'the conversation closed by its thread’s end',
  );
  await conversation.signal<[unknown]>('interaction-settled', {
    from: owner,
    settleMirror: true,
    resolution: {
      requestId: interaction.body.requestId,
      threadId: asker.id,
      conversationId: asker.conversationId,
      answer: { type: 'approval', approved: false, reason: 'the turn was interrupted before an answer' },
      resolvedAt: at,
    },
  });
  await eventually(
    () => conversationSummary(temporal.client, rootConversation),
    (summary) => summary.pendingInteractions === 0 && summary.resolvedInteractions === 1,
    'the mirror settled',
  );
  await service.shutdown();
});

describe('tools that need approval (S6.1)', () => {
  const askToDeploy =
    (service: string) =>
    (request: ReceivedRequest): Reply => {
      const results = toolResultsOf(request);
      return results.length === 0
        ? { toolCalls: [{ name: 'deploy', input: { service } }] }
        : { text: `tool said: ${results[0]!.content}` };
    };

  test('approved → the tool runs', async () => {
    policy = askToDeploy('billing');
    const service = await attachRun(temporal.client, taskQueue, {
      root: { task: 'deploy billing', kernel: { type: 'model' } },
    });
    await using receiver = await ConversationNotificationReceiver.open(
      temporal.client,
      (await service.refreshRoot()).conversationId,
      { taskQueue, capability: service.rootCapability },
    );
    const interaction = await nextInteraction(receiver);
    expect(interaction.body).toMatchObject({
      kind: 'approval',
      tool: { name: 'deploy', input: { service: 'billing' } },
    });
    await resolveNotification(
      temporal.client,
      interaction,
      { type: 'approval', approved: true },
      { capability: service.rootCapability },
    );
    expect((await service.rootControls().subscribeFirstTurn(service.rootThreadId)).result).toBe(
      'tool said: deployed billing',
    );
    expect(deployments).toContain('billing');
  });

  test('denied → the model receives the denial and continues', async () => {
    policy = askToDeploy('payments');
    const service = await attachRun(temporal.client, taskQueue, {
      root: { task: 'deploy payments', kernel: { type: 'model' } },
    });
    await using receiver = await ConversationNotificationReceiver.open(
      temporal.client,
      (await service.refreshRoot()).conversationId,
      { taskQueue, capability: service.rootCapability },
    );
    await resolveNotification(
      temporal.client,
      await nextInteraction(receiver),
      { type: 'approval', approved: false, reason: 'freeze week' },
      { capability: service.rootCapability },
    );
    const first = await service.rootControls().subscribeFirstTurn(service.rootThreadId);
    expect(first.result).toMatch(/a person denied this call: freeze week/);
    expect(deployments).not.toContain('payments');
  });

  test('unanswered → times out as denied', async () => {
    policy = askToDeploy('search');
    const service = await attachRun(temporal.client, taskQueue, {
      root: { task: 'deploy search', kernel: { type: 'model' } },
      grant: { owner: 'tests', interactionTimeoutMs: 1000 },
    });
    const first = await service.rootControls().subscribeFirstTurn(service.rootThreadId);
    expect(first.result).toMatch(/timed out unanswered/);
    expect(deployments).not.toContain('search');
  });

  test('through the tree’s approval gate (S11.4): the root’s “always allow” lets its next call through, an always-ask tool asks', async () => {
    const steps = [
      { toolCalls: [{ name: 'deploy', input: { service: 'gate-a' } }] },
      { toolCalls: [{ name: 'word_count', input: { text: 'two words' } }] },
      { toolCalls: [{ name: 'deploy', input: { service: 'gate-b' } }] },
    ];
    policy = (request) => steps[toolResultsOf(request).length] ?? { text: 'all done' };
    const service = await attachRun(temporal.client, taskQueue, {
      root: { task: 'deploy twice', kernel: { type: 'model' } },
      approvalPolicy: { alwaysAsk: ['word_count'] },
    });
    await using receiver = await ConversationNotificationReceiver.open(
      temporal.client,
      (await service.refreshRoot()).conversationId,
      { taskQueue, capability: service.rootCapability },
    );
    const deploy = await nextInteraction(receiver);
    expect(deploy.body).toMatchObject({ tool: { name: 'deploy', input: { service: 'gate-a' } } });
    await resolveNotification(
      temporal.client,
      deploy,
      { type: 'approval', approved: true, remember: true },
      { capability: service.rootCapability },
    );
    const count = await nextInteraction(receiver);
    expect(count.body).toMatchObject({
      tool: { name: 'word_count' },
      prompt: expect.stringContaining('the approval policy always asks for word_count'),
    });
    await resolveNotification(
      temporal.client,
      count,
      { type: 'approval', approved: true },
      {
        capability: service.rootCapability,
      },
    );
    expect((await service.rootControls().subscribeFirstTurn(service.rootThreadId)).result).toBe('all done');
    expect(deployments).toEqual(expect.arrayContaining(['gate-a', 'gate-b']));
    expect(await service.approvalPolicy()).toMatchObject({ version: 1, remembered: ['deploy'] });
    const rootConversation = (await service.refreshRoot()).conversationId;
    await eventually(
      () => conversationSummary(temporal.client, rootConversation),
      (summary) => summary.pendingInteractions === 0 && summary.resolvedInteractions === 2,
      'both interactions settled',
    );
  });
});
