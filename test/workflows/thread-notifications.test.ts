// SPEC S5.1/S5.2: what a thread publishes about its turns reaches its conversation in order, exactly
// once, and the notifications of one workflow task travel in one publish signal (one action), an
// interrupted turn's included.
import { randomUUID } from 'node:crypto';
import { createActivities } from '../../activities';
import { ConversationNotificationReceiver } from '../../client/conversation-receiver';
import { conversationSummary } from '../../client/conversations';
import type { ThreadService } from '../../client/thread-service';
import { publishSignal } from '../../domain/conversation-messages';
import type { ConversationNotification, ScriptStepShape } from '../../domain/schemas';
import { receiveMany } from '../helpers/conversations';
import { attachRun, eventually, untilTurns } from '../helpers/runs';
import { connectTestTemporal, uniqueTaskQueue, type TestTemporal } from '../helpers/temporal';
import { slowTool } from '../helpers/tools';

let temporal: TestTemporal;
const taskQueue = uniqueTaskQueue('notifications');
const slow = slowTool();
beforeAll(async () => {
  temporal = await connectTestTemporal();
  await temporal.startWorker({ taskQueue, activities: createActivities({ tools: [slow.tool] }) });
});
afterAll(async () => temporal?.close());

const describeItem = ({ body }: ConversationNotification): string =>
  body.type === 'status'
    ? `${body.event}: ${body.detail ?? ''}`
    : body.type === 'message'
      ? body.text
      : body.type;

/** The conversation's `count` notifications, received in order, and that it holds no other. */
async function conversationOf(
  service: ThreadService,
  conversationId: string,
  count: number,
): Promise<string[]> {
  await using receiver = await ConversationNotificationReceiver.open(temporal.client, conversationId, {
    taskQueue,
    capability: service.rootCapability,
  });
  const items = (await receiveMany(receiver, count)).map(describeItem);
  expect((await conversationSummary(temporal.client, conversationId)).lastSeq).toBe(count);
  return items;
}

/** For each workflow task of the thread's history that sent publish signals: how many it sent. */
async function publishSignalsPerTask(threadId: string): Promise<number[]> {
  const events = (await temporal.client.workflow.getHandle(threadId).fetchHistory()).events ?? [];
  const perTask: number[] = [];
  let inTask = 0;
  for (const event of events) {
    if (event.workflowTaskCompletedEventAttributes) {
      if (inTask > 0) perTask.push(inTask);
      inTask = 0;
    } else if (
      event.signalExternalWorkflowExecutionInitiatedEventAttributes?.signalName === publishSignal.name
    ) {
      inTask++;
    }
  }
  if (inTask > 0) perTask.push(inTask);
  return perTask;
}

test('a turn’s start, reply and end reach the conversation in order, once each, one publish signal per task', async () => {
  const service = await attachRun(temporal.client, taskQueue);
  const turns: ScriptStepShape[][] = [
    [{ type: 'reply', text: 'first' }],
    [{ type: 'reply', text: 'second' }],
  ];
  const thread = await service
    .rootControls()
    .spawn({ task: 'reply twice', kernel: { type: 'scripted', turns } });
  await untilTurns(service, thread.id, 1);
  await service.rootControls().sendMessage({ recipient: thread.id, content: 'again', triggerTurn: true });
  await untilTurns(service, thread.id, 2);
  const expected = ['turn-start: turn 1', 'first', 'turn-end: turn 1 completed'];
  expected.push('turn-start: turn 2', 'second', 'turn-end: turn 2 completed');
  expect(await conversationOf(service, thread.conversationId, expected.length)).toEqual(expected);
  const perTask = await publishSignalsPerTask(thread.id);
  expect(perTask.every((count) => count === 1)).toBe(true);
  // Six notifications, fewer signals: a turn of a scripted reply starts and ends in one task.
  expect(perTask.length).toBeLessThan(expected.length);
});

test('an interrupted turn still publishes its end, with what it published before', async () => {
  const service = await attachRun(temporal.client, taskQueue);
  const label = randomUUID();
  const thread = await service.rootControls().spawn({
    task: 'work long',
    kernel: { type: 'scripted', turns: [[{ type: 'tool', tool: 'slow', input: { ms: 120_000, label } }]] },
  });
  await eventually(async () => slow.started.includes(label), Boolean, 'the tool to start');
  await service.rootControls().interrupt(thread.id);
  expect((await untilTurns(service, thread.id, 1)).latestTurn?.status).toBe('interrupted');
  expect(await conversationOf(service, thread.conversationId, 2)).toEqual([
    'turn-start: turn 1',
    'turn-interrupted: turn 1 interrupted',
  ]);
  expect((await publishSignalsPerTask(thread.id)).every((count) => count === 1)).toBe(true);
});
