// SPEC S3.10: every handler is total. Signals sent by name from a raw Temporal client — null, wrong
// shapes, forged operation and request ids, out-of-window sequence numbers and payloads near 2 MiB —
// to every signal of an agent, its root run and its conversation: no workflow task fails, nothing
// changes, and the tree keeps working (a message with triggerTurn still runs a turn, in order).
import type { Client } from '@temporalio/client';
import { randomUUID } from 'node:crypto';
import { newId, relatedId } from '../../domain/ids';
import { mailboxQuery } from '../../domain/messages';
import { attachRun, eventually, untilTurns } from '../helpers/runs';
import { connectTestTemporal, uniqueTaskQueue, type TestTemporal } from '../helpers/temporal';

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

/** Event types of every run of a workflow that failed a workflow task. */
async function failedTasks(client: Client, workflowId: string): Promise<string[]> {
  const history = await client.workflow.getHandle(workflowId).fetchHistory();
  return (history.events ?? [])
    .filter((event) => event.workflowTaskFailedEventAttributes)
    .map((event) => String(event.workflowTaskFailedEventAttributes?.failure?.message));
}

test('null, malformed, forged and nearly-2-MiB signals to an agent, its root and its conversation change nothing', async () => {
  const service = await attachRun(temporal.client, taskQueue);
  const root = service.rootControls();
  const child = await root.spawn({
    name: 'target',
    task: 'keep working',
    kernel: { type: 'scripted', turns: [[{ type: 'reply', text: 'turn done' }]] },
  });
  await untilTurns(service, child.id, 1);
  const client = temporal.client;
  const forgedMessage = (seq: number, content: string) => ({
    id: newId('message', randomUUID),
    sender: service.rootThreadId,
    recipient: child.id,
    seq,
    content,
    triggerTurn: true,
    sentAt: new Date().toISOString(),
  });

  const childSignals = [
    'control-response',
    'deliver-message',
    'close-thread',
    'interaction-answered',
    'interrupt',
  ];
  const rootSignals = ['control-request', 'thread-event', 'interrupt'];
  const conversationSignals = ['publish', 'interaction-settled', 'conversation-page-delivered'];
  const sends: Promise<void>[] = [];
  for (const payload of junk()) {
    for (const name of childSignals) sends.push(signal(client, child.id, name, payload));
    for (const name of rootSignals) sends.push(signal(client, service.rootThreadId, name, payload));
    for (const name of conversationSignals) sends.push(signal(client, child.conversationId, name, payload));
  }
  // Shaped like the real thing, but forged: a response to no pending operation, an answer to no
  // pending interaction, deliveries far ahead of the mailbox's window, a delivery with huge content.
  sends.push(signal(client, child.id, 'control-response', { operationId: `${child.id}/999`, result: {} }));
  sends.push(
    signal(client, child.id, 'interaction-answered', {
      requestId: newId('request', randomUUID),
      answer: { type: 'approval', approved: true },
    }),
  );
  for (const seq of [5_000 + 1, 1_000_000, Number.MAX_SAFE_INTEGER])
    sends.push(signal(client, child.id, 'deliver-message', forgedMessage(seq, 'from nowhere')));
  sends.push(signal(client, child.id, 'deliver-message', forgedMessage(2, nearlyTwoMiB)));
  await Promise.all(sends);

  // The tree still works: a real message triggers the next turn of the same, live thread.
  const message = await root.sendMessage({ recipient: child.id, content: 'still there?', triggerTurn: true });
  expect(message.seq).toBe(1);
  await untilTurns(service, child.id, 2);
  const mailbox = await client.workflow.getHandle(child.id).query(mailboxQuery);
  expect(mailbox.received.map((entry) => [entry.seq, entry.content])).toEqual([[1, 'still there?']]);
  const threads = await eventually(
    () => root.listThreads(),
    (listed) => listed.find((thread) => thread.id === child.id)?.turnsCompleted === 2,
    'the child to report its second turn',
  );
  expect(threads.find((thread) => thread.id === child.id)?.status).toBe('idle');

  for (const workflowId of [
    child.id,
    service.rootThreadId,
    child.conversationId,
    relatedId('conversation', service.rootThreadId),
  ])
    expect([workflowId, await failedTasks(client, workflowId)]).toEqual([workflowId, []]);
  await service.shutdown();
}, 180_000);
