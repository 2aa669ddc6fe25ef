// SPEC S3.10: a workflow task's whole answer to the server must stay under 4 MiB, or the task fails on
// every attempt and the workflow is stuck. Legitimate load answered at once — many subscribers of one
// thread whose turn ends with a long result, eight client spawns of large specs — used to pass it; now
// the answers past a budget leave in the next tasks, and every caller gets its whole answer.
import type { temporal as proto } from '@temporalio/proto';
import { ConversationNotificationReceiver } from '../../client/conversation-receiver';
import { resolveNotification } from '../../client/conversations';
import { randomUUID } from 'node:crypto';
import { createActivities } from '../../activities';
import { kitCall } from '../../client/errors';
import { maxUpdateBytes } from '../../domain/answer-bounds';
import { jsonBytes } from '../../domain/bytes';
import { carriedResultBytes, clipToBytes } from '../../domain/carry-bounds';
import { ErrorKind } from '../../domain/errors';
import { newId } from '../../domain/ids';
import { spawnUpdate } from '../../domain/messages';
import type { AgentThread } from '../../domain/schemas';
import { maxLongPolls } from '../../workflows/poll-slots';
import { attachRun, eventually, kitErrorOf, untilTurns } from '../helpers/runs';
import { failedTasks, historyEvents } from '../helpers/task-answers';
import { connectTestTemporal, uniqueTaskQueue, type TestTemporal } from '../helpers/temporal';
import { longTool, worst } from '../helpers/tools';

let temporal: TestTemporal;
const taskQueue = uniqueTaskQueue('answer-bounds');
beforeAll(async () => {
  temporal = await connectTestTemporal();
  await temporal.startWorker({ taskQueue, activities: createActivities({ tools: [longTool()] }) });
});
afterAll(async () => temporal?.close());

/** After each event: how many accepted first-turn updates were not completed yet. */
function pollsInFlight(events: readonly proto.api.history.v1.IHistoryEvent[]): number[] {
  const open = new Set<string>();
  return events.map((event) => {
    const accepted = event.workflowExecutionUpdateAcceptedEventAttributes;
    if (accepted?.acceptedRequest?.input?.name === 'first-turn')
      open.add(accepted.acceptedRequest.meta!.updateId!);
    const completed = event.workflowExecutionUpdateCompletedEventAttributes;
    if (completed) open.delete(completed.meta!.updateId!);
    return open.size;
  });
}

test('twenty subscribers of a thread whose turn ends with a 192 kB result each get it, five at a time; no task fails', async () => {
  const service = await attachRun(temporal.client, taskQueue);
  const root = service.rootControls();
  // Tools answer at most 16,000 characters; the turn repeats the tool's answer.
  const result = worst(32_000);
  const thread = await root.spawn({
    task: 'answer at length once approved',
    kernel: {
      type: 'scripted',
      turns: [
        [
          { type: 'ask', kind: 'approval', prompt: 'go?' },
          { type: 'tool', tool: 'long', input: { length: 16_000 } },
          { type: 'reply', text: '{{last}}{{last}}' },
        ],
      ],
    },
  });
  const receiver = await ConversationNotificationReceiver.open(temporal.client, thread.conversationId, {
    taskQueue,
    capability: service.rootCapability,
  });
  let interaction = await receiver.recv();
  while (interaction && interaction.body.type !== 'interaction') interaction = await receiver.recv();
  await receiver.dispose();
  // Twenty subscribers wait for the first turn; at most five hold one of the thread's update slots
  // at a time (Temporal keeps 10 in flight per workflow), so a message still gets through.
  const handle = temporal.client.workflow.getHandle(thread.id);
  const firstRun = (await handle.describe()).runId;
  const subscribers = Array.from({ length: 20 }, () => root.subscribeFirstTurn(thread.id));
  await eventually(
    () => historyEvents(temporal.client, thread.id),
    (events) => pollsInFlight(events).at(-1) === maxLongPolls,
    'five subscribers to wait',
  );
  expect((await root.sendMessage({ recipient: thread.id, content: 'still reachable' })).seq).toBe(1);
  await resolveNotification(
    temporal.client,
    interaction!,
    { type: 'approval', approved: true },
    { capability: service.rootCapability },
  );
  const outcomes = await Promise.all(subscribers);
  // Those answered after the thread continued as new (its history passed the size Temporal suggests
  // it at) get what crosses continue-as-new: the result's first 16 KiB and a note.
  const carried = clipToBytes(result, carriedResultBytes, 'a continue-as-new');
  for (const outcome of outcomes) expect([result, carried]).toContain(outcome.result);
  expect(outcomes.filter((outcome) => outcome.result === result).length).toBeGreaterThanOrEqual(maxLongPolls);
  expect(Math.max(...pollsInFlight(await historyEvents(temporal.client, thread.id, firstRun)))).toBe(
    maxLongPolls,
  );
  expect(failedTasks(await historyEvents(temporal.client, thread.id, firstRun))).toEqual([]);
  expect(failedTasks(await historyEvents(temporal.client, thread.id))).toEqual([]);
  await service.shutdown();
}, 120_000);

test('ten client spawns of 160 KiB specs at once are admitted and answered whole; a larger one is refused', async () => {
  const service = await attachRun(temporal.client, taskQueue, {
    grant: { owner: 'tests', maxConcurrent: 16, maxTotal: 16 },
  });
  const root = service.rootControls();
  const spec = (index: number, length: number) => ({
    name: `big-${index}`,
    task: `${index}: ${worst(length)}`,
    kernel: { type: 'scripted' as const, turns: [[{ type: 'reply' as const, text: `big ${index} done` }]] },
  });
  // Ten is as many updates as Temporal keeps in flight for one workflow; each spec is at the bound.
  const specs = Array.from({ length: 10 }, (_, index) => spec(index, 27_000));
  expect(Math.min(...specs.map((request) => jsonBytes(request)))).toBeGreaterThan(maxUpdateBytes - 2_000);
  const threads: AgentThread[] = await Promise.all(specs.map((request) => root.spawn(request)));
  expect(threads.map((thread) => thread.task)).toEqual(specs.map((request) => request.task));
  for (const thread of threads) {
    expect((await untilTurns(service, thread.id, 1)).latestTurn?.result).toMatch(/^big \d done$/);
  }
  expect(failedTasks(await historyEvents(temporal.client, service.rootThreadId))).toEqual([]);
  // Past the bound: refused by the client, and by the workflow when sent past the client's checks.
  const large = spec(10, 28_000);
  expect((await kitErrorOf(root.spawn(large))).kind).toBe(ErrorKind.Protocol);
  const raw = await kitErrorOf(
    kitCall('spawn', () =>
      service.handle.executeUpdate(spawnUpdate, {
        args: [
          service.rootCapability,
          { ...large, fork: { type: 'none' }, requestId: newId('request', randomUUID) },
        ],
      }),
    ),
  );
  expect(raw).toMatchObject({ kind: ErrorKind.Protocol, details: { limit: 'updateBytes' } });
  expect((await root.listThreads()).length).toBe(11);
  await service.shutdown();
}, 180_000);
