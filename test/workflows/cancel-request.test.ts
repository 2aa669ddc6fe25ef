// SPEC S3.5, S4.8: a cancel request from Temporal itself — the Web UI's Cancel button, `temporal
// workflow cancel`, a raw client's `handle.cancel()` — stops an agent as `close` does and a root run as
// `shutdown` does. Before, it tore the workflow down where it stood: the root kept a cancelled agent
// listed idle and counted live (its slot never came back), and a cancelled root left its sub-agents and
// conversations running.
import { Worker } from '@temporalio/worker';
import { ConversationNotificationReceiver } from '../../client/conversation-receiver';
import type { ConversationNotification } from '../../domain/schemas';
import { attachRun, eventually, untilTurns } from '../helpers/runs';
import {
  connectTestTemporal,
  uniqueTaskQueue,
  workflowBundlePath,
  type TestTemporal,
} from '../helpers/temporal';
import { failedTasks } from '../helpers/task-answers';

let temporal: TestTemporal;
const taskQueue = uniqueTaskQueue('cancel-request');
beforeAll(async () => {
  temporal = await connectTestTemporal();
  await temporal.startWorker({ taskQueue });
});
afterAll(async () => temporal?.close());

const idleAgent = (name: string) => ({
  name,
  task: 'answer once, then wait',
  kernel: { type: 'scripted' as const, turns: [[{ type: 'reply' as const, text: 'done' }]] },
});

/** How Temporal records a workflow's end, and that none of its tasks failed. */
async function closed(workflowId: string) {
  const handle = temporal.client.workflow.getHandle(workflowId);
  const status = await eventually(
    async () => (await handle.describe()).status.name,
    (name) => name !== 'RUNNING',
    `${workflowId} to close`,
  );
  const history = await handle.fetchHistory();
  expect([workflowId, failedTasks(history.events ?? [])]).toEqual([workflowId, []]);
  // The new path replays as it ran.
  await Worker.runReplayHistory({ workflowBundle: { codePath: workflowBundlePath() } }, history, workflowId);
  return status;
}

test('a cancel request stops an agent as close does, and a root run as shutdown does', async () => {
  const service = await attachRun(temporal.client, taskQueue, {
    grant: { owner: 'tests', idleTimeoutMs: 600_000, maxConcurrent: 2 },
  });
  const root = service.rootControls();
  const first = await root.spawn(idleAgent('first'));
  const second = await root.spawn(idleAgent('second'));
  await untilTurns(service, first.id, 1);
  await untilTurns(service, second.id, 1);
  const receiver = await ConversationNotificationReceiver.open(temporal.client, first.conversationId, {
    taskQueue,
    capability: service.rootCapability,
    pollWaitMs: 1_000,
  });

  // An operator cancels one agent from outside agents-kit.
  await temporal.client.workflow.getHandle(first.id).cancel();
  expect(await closed(first.id)).toBe('CANCELLED');
  const listed = await eventually(
    () => root.loadThread(first.id),
    (thread) => thread?.status === 'cancelled',
    'the root to list the cancelled agent as cancelled',
  );
  expect(listed?.status).toBe('cancelled');
  expect(await service.counters()).toMatchObject({ live: 1, total: 2 });
  // Its conversation says so, as after a close.
  const seen: ConversationNotification[] = [];
  for (;;) {
    const item = await receiver.recv();
    if (!item) break;
    seen.push(item);
    if (item.body.type === 'status' && item.body.event === 'thread-end') break;
  }
  expect(seen.at(-1)?.body).toMatchObject({ type: 'status', event: 'thread-end', detail: 'cancelled' });
  // Its slot came back: a third agent fits under maxConcurrent 2.
  const third = await root.spawn(idleAgent('third'));
  await untilTurns(service, third.id, 1);

  // Then the root run itself: the tree shuts down, and the run ends as cancelled.
  await temporal.client.workflow.getHandle(service.rootThreadId).cancel();
  expect(await closed(service.rootThreadId)).toBe('CANCELLED');
  for (const agent of [second, third]) {
    await closed(agent.id);
    const thread = await temporal.client.workflow.getHandle(agent.id).query<{ status: string }>('thread');
    expect([agent.id, thread.status]).toEqual([agent.id, 'cancelled']);
  }
}, 240_000);

test('a cancel request mid-turn, while the agent waits for an answer, ends its turn and the thread', async () => {
  const service = await attachRun(temporal.client, taskQueue);
  const asker = await service.rootControls().spawn({
    name: 'asker',
    task: 'ask and wait',
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
  await eventually(
    async () => (await service.rootControls().loadThread(asker.id))?.status,
    (status) => status === 'running',
    'the asker to wait in its first turn',
  );
  await temporal.client.workflow.getHandle(asker.id).cancel();
  expect(await closed(asker.id)).toBe('CANCELLED');
  await eventually(
    () => service.rootControls().loadThread(asker.id),
    (thread) => thread?.status === 'cancelled',
    'the root to list the asker as cancelled',
  );
  expect(await service.counters()).toMatchObject({ live: 0, total: 1 });
  await service.shutdown();
}, 120_000);
