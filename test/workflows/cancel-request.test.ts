// SPEC S3.5, S4.8: a cancel request from Temporal itself — the Web UI's Cancel button, `temporal
// workflow cancel`, a raw client's `handle.cancel()` — stops an agent as `close` does and a root run as
// `shutdown` does. Before, it tore the workflow down where it stood: the root kept a cancelled agent
// listed idle and counted live (its slot never came back), and a cancelled root left its sub-agents and
// conversations running. A request that comes while the workflow ends by itself lets the ending finish
// (patch `cancelWhileEnding`). A cancelled agent's live sub-agents are closed with it
// (`cancelClosesSubtree`). An agent terminated from outside: test/workflows/outside-ends.test.ts.
import { ConversationNotificationReceiver } from '../../client/conversation-receiver';
import type { ConversationId } from '../../domain/ids';
import {
  attachRun,
  eventually,
  idleAgent,
  leadWithHelper,
  untilHistoryHolds as holdsInHistory,
  untilTurns,
} from '../helpers/runs';
import type { ThreadService } from '../../client/thread-service';
import { connectTestTemporal, uniqueTaskQueue, type TestTemporal } from '../helpers/temporal';
import { Stage, updateStage } from '../helpers/task-answers';
import { randomUUID } from 'node:crypto';
import { spawnUpdate } from '../../domain/messages';
import { newId } from '../../domain/ids';
import { patchesOf } from '../helpers/histories';
import { closedAs, threadEndOf } from '../helpers/closing';

let temporal: TestTemporal;
const taskQueue = uniqueTaskQueue('cancel-request');
beforeAll(async () => {
  temporal = await connectTestTemporal();
  await temporal.startWorker({ taskQueue });
});
afterAll(async () => temporal?.close());

const closed = (workflowId: string, patch?: string) => closedAs(temporal.client, workflowId, patch);

const openConversation = (service: ThreadService, conversationId: ConversationId) =>
  ConversationNotificationReceiver.open(temporal.client, conversationId, {
    taskQueue,
    capability: service.rootCapability,
    pollWaitMs: 1_000,
  });

test('a cancel request stops an agent as close does, and a root run as shutdown does', async () => {
  const service = await attachRun(temporal.client, taskQueue, {
    grant: { owner: 'tests', idleTimeoutMs: 600_000, maxConcurrent: 2 },
  });
  const root = service.rootControls();
  const first = await root.spawn(idleAgent('first'));
  const second = await root.spawn(idleAgent('second'));
  await untilTurns(service, first.id, 1);
  await untilTurns(service, second.id, 1);
  const receiver = await openConversation(service, first.conversationId);

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
  expect(await threadEndOf(receiver)).toMatchObject({
    type: 'status',
    event: 'thread-end',
    detail: 'cancelled',
  });
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
  // shutdown() stays idempotent after it: the report of the shutdown the cancel ran, read from the closed
  // run (a cancelled run keeps no result).
  const report = await service.shutdown();
  expect(report.cancelled.sort()).toEqual([first.id, second.id, third.id].sort());
  expect(report).toMatchObject({ failed: [], unconfirmed: [] });
  expect(await service.refreshRoot()).toMatchObject({ id: service.rootThreadId, status: 'cancelled' });
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

const untilHistoryHolds = (workflowId: string, text: string) =>
  holdsInHistory(temporal.client, workflowId, text);

test('a close and a cancel request in one task: the agent still reports its end, then ends as cancelled', async () => {
  // The agent runs on a queue whose worker the test stops, so both land before its next task.
  const laterQueue = uniqueTaskQueue('cancel-later');
  const first = await temporal.startWorker({ taskQueue: laterQueue });
  const service = await attachRun(temporal.client, taskQueue, {
    shutdownGraceMs: 60_000,
    grant: { owner: 'tests', remoteTargets: { later: { taskQueue: laterQueue } } },
  });
  const root = service.rootControls();
  const agent = await root.spawnRemote({ target: 'later', ...idleAgent('closed-twice') });
  await untilTurns(service, agent.id, 1);
  const receiver = await openConversation(service, agent.conversationId);
  first.shutdown();
  await eventually(
    async () => first.getState(),
    (state) => state === 'STOPPED',
    'the worker to stop',
  );

  await root.close(agent.id);
  await untilHistoryHolds(agent.id, '"signalName":"close-thread"');
  await temporal.client.workflow.getHandle(agent.id).cancel();
  await untilHistoryHolds(agent.id, 'EVENT_TYPE_WORKFLOW_EXECUTION_CANCEL_REQUESTED');
  await temporal.startWorker({ taskQueue: laterQueue });

  expect(await closed(agent.id, 'cancelWhileEnding')).toBe('CANCELLED');
  expect(await threadEndOf(receiver)).toMatchObject({
    type: 'status',
    event: 'thread-end',
    detail: 'cancelled',
  });
  // It reported its end: the root's shutdown confirms it at once, not after its grace period.
  const report = await service.shutdown();
  expect(report).toMatchObject({ cancelled: [agent.id], unconfirmed: [] });
}, 240_000);

test('a cancel request during a shutdown lets it finish: the caller gets its report, the run ends as cancelled', async () => {
  const nowhere = uniqueTaskQueue('no-worker');
  const service = await attachRun(temporal.client, taskQueue, {
    shutdownGraceMs: 8_000,
    grant: { owner: 'tests', remoteTargets: { void: { taskQueue: nowhere } } },
  });
  const root = service.rootControls();
  // A sub-agent no worker runs: the shutdown waits out its grace period for it.
  const lost = await root.spawnRemote({ target: 'void', task: 'never runs' });
  const fine = await root.spawn(idleAgent('fine'));
  await untilTurns(service, fine.id, 1);
  const rootThread = (await root.loadThread(service.rootThreadId))!;
  const receiver = await openConversation(service, rootThread.conversationId);

  const shutdown = service.shutdown();
  await untilHistoryHolds(service.rootThreadId, '"signalName":"close-thread"');
  await temporal.client.workflow.getHandle(service.rootThreadId).cancel();
  expect(await shutdown).toMatchObject({ cancelled: [fine.id], unconfirmed: [lost.id], failed: [] });
  expect(await closed(service.rootThreadId, 'cancelWhileEnding')).toBe('CANCELLED');
  expect(await threadEndOf(receiver)).toMatchObject({ type: 'status', event: 'thread-end' });
  await temporal.client.workflow.getHandle(lost.id).terminate('test cleanup');
}, 240_000);

test('an agent cancelled from outside takes its live sub-agents with it, as a close does', async () => {
  const service = await attachRun(temporal.client, taskQueue);
  const root = service.rootControls();
  const { lead, helper } = await leadWithHelper(service);

  await temporal.client.workflow.getHandle(lead.id).cancel();
  expect(await closed(lead.id)).toBe('CANCELLED');
  // The helper's workflow is closed by the root, as under a close of the lead.
  expect(await closed(helper.id)).toBe('COMPLETED');
  const listed = await eventually(
    () => root.listThreads(),
    (threads) =>
      threads.every((thread) => thread.id === service.rootThreadId || thread.status === 'cancelled'),
    'the root to list both cancelled',
  );
  expect(listed.map((thread) => [thread.name, thread.status])).toEqual([
    ['root', expect.any(String)],
    ['lead', 'cancelled'],
    ['helper', 'cancelled'],
  ]);
  expect(await service.counters()).toMatchObject({ live: 0, total: 2 });
  expect(
    patchesOf((await temporal.client.workflow.getHandle(service.rootThreadId).fetchHistory()).events ?? []),
  ).toContain('cancelClosesSubtree');
  await service.shutdown();
}, 120_000);

test('a cancel request while spawns wait for room to start: the root still ends, with no failed task', async () => {
  // The root runs on its own queue so that its next task takes ten large spawns and the request at once.
  const rootQueue = uniqueTaskQueue('cancel-busy-root');
  const rootWorker = await temporal.startWorker({ taskQueue: rootQueue });
  const service = await attachRun(temporal.client, rootQueue, { shutdownGraceMs: 30_000 });
  await service.rootControls().listThreads(); // the root's first task is done
  rootWorker.shutdown();
  await eventually(
    async () => rootWorker.getState(),
    (state) => state === 'STOPPED',
    'the worker to stop',
  );
  // Each start carries ~255 kB: five fit the bytes a task may start at once, five wait for room.
  const spawns = Array.from({ length: 10 }, (_, index) => ({
    name: `big-${index}`,
    task: 'x'.repeat(100_000),
    instructions: 'y'.repeat(55_000),
    kernel: idleAgent('big').kernel,
    fork: { type: 'none' as const },
    requestId: newId('request', randomUUID),
  }));
  const updateIds = spawns.map(() => randomUUID());
  const answers = spawns.map((request, index) =>
    service.handle
      .executeUpdate(spawnUpdate, { args: [service.rootCapability, request], updateId: updateIds[index]! })
      .then(
        () => 'spawned',
        () => 'refused',
      ),
  );
  await eventually(
    () => Promise.all(updateIds.map((id) => updateStage(temporal.client, service.rootThreadId, id))),
    (stages) => stages.every((stage) => stage === Stage.UPDATE_WORKFLOW_EXECUTION_LIFECYCLE_STAGE_ADMITTED),
    'the server to admit the ten spawns',
  );
  await temporal.client.workflow.getHandle(service.rootThreadId).cancel();
  await untilHistoryHolds(service.rootThreadId, 'EVENT_TYPE_WORKFLOW_EXECUTION_CANCEL_REQUESTED');
  await temporal.startWorker({ taskQueue: rootQueue });

  expect(await closed(service.rootThreadId)).toBe('CANCELLED');
  const outcomes = await Promise.all(answers);
  expect(outcomes).toContain('refused');
  // Every sub-agent that did start was closed by the root's shutdown.
  const threads = (
    await service
      .rootControls()
      .listThreads()
      .catch(() => [])
  ).filter((thread) => thread.depth > 0);
  for (const thread of threads) {
    const status = (
      await temporal.client.workflow
        .getHandle(thread.id)
        .describe()
        .catch(() => undefined)
    )?.status.name;
    expect([thread.id, status === 'RUNNING']).toEqual([thread.id, false]);
  }
}, 240_000);
