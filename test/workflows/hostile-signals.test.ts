// SPEC S3.10: every handler is total. Signals sent by name from a raw Temporal client — null, wrong
// shapes, forged operation ids and proofs, and payloads near 2 MiB — to every signal of an agent, its
// root run and its conversation: no workflow task fails, nothing changes, and the tree keeps working
// (a message with triggerTurn still runs a turn, numbered 1).
import type { Client } from '@temporalio/client';
import { randomUUID } from 'node:crypto';
import { newId } from '../../domain/ids';
import { eventually } from '../helpers/runs';
import { connectTestTemporal, uniqueTaskQueue, type TestTemporal } from '../helpers/temporal';
import { expectTreeUnharmed, treeWithIdleChild } from '../helpers/workflow-handlers';

let temporal: TestTemporal;
const taskQueue = uniqueTaskQueue('hostile');
beforeAll(async () => {
  temporal = await connectTestTemporal();
  await temporal.startWorker({ taskQueue });
});
afterAll(async () => temporal?.close());

/** Just under Temporal's 2 MiB payload limit, so the server delivers it. */
const nearlyTwoMiB = 'x'.repeat(2 * 1024 * 1024 - 4096);

/** Payloads of every wrong shape, for any signal. */
const junk = (): unknown[] => [
  null,
  42,
  'text',
  [],
  {},
  { operationId: 7 },
  { deep: { deeper: [null] } },
  nearlyTwoMiB,
];

/** Sends `payload` as signal `name` straight to a workflow, as any Temporal client can. */
const signal = (client: Client, workflowId: string, name: string, payload: unknown) =>
  client.workflow.getHandle(workflowId).signal<[unknown]>(name, payload);

test('null, malformed, forged and nearly-2-MiB signals to an agent, its root and its conversation change nothing', async () => {
  const client = temporal.client;
  const tree = await treeWithIdleChild(client, taskQueue);
  const { service, child } = tree;
  const root = service.rootControls();
  // Well-shaped, but proven by nobody: a capability with a made-up proof.
  const forged = (threadId: string, lineage: string[]) => ({
    rootId: service.rootThreadId,
    threadId,
    lineage,
    proof: 'e'.repeat(64),
  });
  const forgedRoot = forged(service.rootThreadId, []);
  const forgedChild = forged(child.id, [service.rootThreadId]);

  const childSignals = ['control-request', 'control-response', 'close-thread', 'interrupt'];
  const rootSignals = ['control-request', 'control-response', 'thread-event', 'interrupt'];
  const conversationSignals = [
    'publish',
    'interaction-settled',
    'conversation-page-delivered',
    'live-output',
  ];
  const sends: Promise<void>[] = [];
  for (const payload of junk()) {
    for (const name of childSignals) sends.push(signal(client, child.id, name, payload));
    for (const name of rootSignals) sends.push(signal(client, service.rootThreadId, name, payload));
    for (const name of conversationSignals) sends.push(signal(client, child.conversationId, name, payload));
  }
  const message = (content: string) => ({ recipient: child.id, content, triggerTurn: true });
  sends.push(
    // A message, a close and a response from a forged root; a response for an operation nobody awaits.
    signal(client, child.id, 'control-request', {
      from: forgedRoot,
      operationId: 'x/1',
      operation: { type: 'send-message', request: message('from nowhere') },
    }),
    signal(client, child.id, 'control-request', {
      from: forgedRoot,
      operationId: 'x/2',
      operation: { type: 'send-message', request: message(nearlyTwoMiB) },
    }),
    signal(client, child.id, 'close-thread', { from: forgedRoot, reason: 'forged' }),
    signal(client, child.id, 'control-response', {
      from: forgedRoot,
      operationId: `${child.id}/1`,
      result: {},
    }),
    // A spawn and an invented turn from a forged child, to its root run.
    signal(client, service.rootThreadId, 'control-request', {
      from: forgedChild,
      operationId: 'y/1',
      operation: { type: 'spawn', request: { task: 'forged', fork: { type: 'none' } } },
    }),
    signal(client, service.rootThreadId, 'thread-event', {
      from: forgedChild,
      event: { type: 'thread-end', threadId: child.id, status: 'completed', at: new Date().toISOString() },
    }),
    // A notification from a forged child, to its conversation.
    signal(client, child.conversationId, 'publish', {
      from: forgedChild,
      notifications: [
        {
          id: newId('notification', randomUUID),
          createdAt: new Date().toISOString(),
          body: { type: 'message', text: 'forged' },
        },
      ],
    }),
  );
  // Resolves of interactions nobody waits for, proven and not, malformed and as large as allowed: each
  // is refused to its sender (a proven one gets the answer by signal), and changes nothing.
  const requestId = newId('request', randomUUID);
  const resolves = [
    { threadId: child.id, request: null },
    { threadId: child.id, request: { requestId, answer: { type: 'approval', approved: true } } },
    { threadId: child.id, request: { requestId, answer: { type: 'question', text: 'y'.repeat(100_000) } } },
    { threadId: service.rootThreadId, request: { requestId, answer: { type: 'approval', approved: true } } },
  ];
  const childProof = await service.capabilityOf(child.id);
  resolves.forEach((operation, index) => {
    const request = (from: unknown) => ({
      from,
      operationId: `r/${index}`,
      operation: { type: 'resolve', ...operation },
    });
    sends.push(
      signal(client, child.id, 'control-request', request(service.rootCapability)),
      signal(client, child.id, 'control-request', request(forgedRoot)),
      signal(client, service.rootThreadId, 'control-request', request(childProof)),
    );
  });
  await Promise.all(sends);

  // No task failed, and the tree still works: a real message triggers the next turn of the same thread.
  await expectTreeUnharmed(client, tree);
  const threads = await eventually(
    () => root.listThreads(),
    (listed) => listed.find((thread) => thread.id === child.id)?.turnsCompleted === 2,
    'the child to report its second turn',
  );
  expect(threads.find((thread) => thread.id === child.id)?.status).toBe('idle');
  expect(threads).toHaveLength(2);
  await service.shutdown();
}, 180_000);
