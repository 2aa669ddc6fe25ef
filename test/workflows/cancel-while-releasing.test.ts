// SPEC S3.5, S7.3: a cancel request that lands while a root run or an agent prepares to continue as new
// (patch `cancelWhileReleasing`) stops it as one during its main loop does. Before, it tore the run down
// where it stood: a root left its sub-agents running, an agent never told its conversation it ended.
// The window the test aims at: a young run that is due waits out its pacing timer (RunLifetime, up to
// 1.1 s) before it drains; runs are kept busy until the request reaches one while it waits.
import { ThreadControls } from '../../client/thread-controls';
import type { ThreadService } from '../../client/thread-service';
import { ConversationNotificationReceiver } from '../../client/conversation-receiver';
import { attachRun, idleAgent, untilClosed, untilHistoryHolds, untilTurns } from '../helpers/runs';
import { cancelWhilePacing } from '../helpers/pacing';
import { closedAs, expectEndedCancelled } from '../helpers/closing';
import { patchesOf } from '../helpers/histories';
import { bundleWith, suiteWorker, uniqueTaskQueue, type TestTemporal } from '../helpers/temporal';
import { WorkflowUpdateStage } from '@temporalio/client';
import { createActivities } from '../../activities';
import { createAgentWorker } from '../../workers/create-worker';
import { sendMessageUpdate } from '../../domain/messages';
import { holdUpdate, letGoSignal } from '../deploy/hold-release-interceptors';

let temporal: TestTemporal;
const { taskQueue } = suiteWorker('cancel-releasing', (connected) => (temporal = connected));

const patchesIn = async (workflowId: string) =>
  patchesOf((await temporal.client.workflow.getHandle(workflowId).fetchHistory()).events ?? []);

const openConversation = (service: ThreadService, conversationId: string, taskQueue: string) =>
  ConversationNotificationReceiver.open(temporal.client, conversationId as never, {
    taskQueue,
    capability: service.rootCapability,
    pollWaitMs: 1_000,
  });

test('a root run cancelled while it prepares to continue as new shuts its tree down', async () => {
  const service = await attachRun(temporal.client, taskQueue, { continueAsNewAfterEvents: 100 });
  const agent = await service.rootControls().spawn(idleAgent('below'));
  await untilTurns(service, agent.id, 1);
  // The agent's messages to the root grow the root's history (each an update of the root's workflow).
  const asAgent = new ThreadControls(service.handle, await service.capabilityOf(agent.id));
  const runId = await cancelWhilePacing(temporal.client, service.rootThreadId, (n) =>
    asAgent.sendMessage({ recipient: service.rootThreadId, content: `m${n}` }),
  );

  // It stopped as a shutdown stops it: that run ends as cancelled, and its sub-agent was closed.
  expect(await closedAs(temporal.client, service.rootThreadId)).toBe('CANCELLED');
  expect((await temporal.client.workflow.getHandle(service.rootThreadId).describe()).runId).toBe(runId);
  await closedAs(temporal.client, agent.id);
  const thread = await temporal.client.workflow.getHandle(agent.id).query<{ status: string }>('thread');
  expect(thread.status).toBe('cancelled');
  expect(await patchesIn(service.rootThreadId)).toContain('cancelWhileReleasing');
}, 300_000);

test('an agent cancelled while it prepares to continue as new reports its end', async () => {
  const service = await attachRun(temporal.client, taskQueue, { continueAsNewAfterEvents: 100 });
  const root = service.rootControls();
  const agent = await root.spawn(idleAgent('busy'));
  await untilTurns(service, agent.id, 1);
  const receiver = await openConversation(service, agent.conversationId, taskQueue);
  await cancelWhilePacing(temporal.client, agent.id, (n) =>
    root.sendMessage({ recipient: agent.id, content: `m${n}` }),
  );

  expect(await closedAs(temporal.client, agent.id)).toBe('CANCELLED');
  // It ended as a close ends it (torn down, it stayed idle), and told its root and its conversation.
  const ended = await temporal.client.workflow.getHandle(agent.id).query<{ status: string }>('thread');
  expect(ended.status).toBe('cancelled');
  expect(await patchesIn(agent.id)).toContain('cancelWhileReleasing');
  await expectEndedCancelled(root, agent.id, receiver);
  expect(await service.counters()).toMatchObject({ live: 0 });
  await service.shutdown();
}, 300_000);

test('a root run cancelled while it drains answers the requests it had kept for its next run', async () => {
  // A build with an update that holds the drain open (test/deploy/hold-release-interceptors.ts).
  const queue = uniqueTaskQueue('cancel-releasing-drain');
  const worker = await createAgentWorker({
    connection: temporal.nativeConnection,
    taskQueue: queue,
    activities: createActivities(),
    workflows: { workflowBundle: { code: await bundleWith('hold-release-interceptors') } },
  });
  await worker.runUntil(async () => {
    const service = await attachRun(temporal.client, queue, { continueAsNewAfterEvents: 100 });
    const root = service.rootControls();
    const spawner = await root.spawn({
      name: 'spawner',
      task: 'spawn when asked',
      kernel: {
        type: 'scripted',
        turns: [
          [{ type: 'reply', text: 'ready' }],
          [
            { type: 'spawn', request: idleAgent('never') },
            { type: 'reply', text: '{{last}}' },
          ],
        ],
      },
    });
    await untilTurns(service, spawner.id, 1);
    const handle = temporal.client.workflow.getHandle(service.rootThreadId);
    await handle.startUpdate(holdUpdate, { waitForStage: WorkflowUpdateStage.ACCEPTED });
    // Messages to the root until it is due and drains: then its validators refuse them, to be retried.
    const asSpawner = await service.capabilityOf(spawner.id);
    const probe = (n: number) =>
      handle
        .executeUpdate(sendMessageUpdate, {
          args: [asSpawner, { recipient: service.rootThreadId, content: `m${n}`, triggerTurn: false }],
        })
        .then(
          () => false,
          (error: Error) => /continuing as new/.test(String(error.cause ?? error)),
        );
    let sent = 0;
    while (!(await probe(sent++))) if (sent > 2_000) throw new Error('the root never drained');
    // Draining, it keeps the spawner's spawn request for its next run; then the cancel request comes.
    await root.sendMessage({ recipient: spawner.id, content: 'spawn now', triggerTurn: true });
    await untilHistoryHolds(temporal.client, service.rootThreadId, '"signalName":"control-request"');
    await handle.cancel();
    await handle.signal(letGoSignal).catch(() => undefined);

    expect(await untilClosed(temporal.client, service.rootThreadId)).toBe('CANCELLED');
    expect(await patchesIn(service.rootThreadId)).toContain('cancelWhileReleasing');
    // The kept request was answered (the root stays, so it does not wait for a next run), and the tree
    // was shut down with the spawner in it.
    const answers = ((await handle.fetchHistory()).events ?? []).filter(
      (event) =>
        event.signalExternalWorkflowExecutionInitiatedEventAttributes?.signalName === 'control-response',
    );
    expect(answers.length).toBe(1);
    expect(await untilClosed(temporal.client, spawner.id)).toBe('CANCELLED');
    const closed = await temporal.client.workflow.getHandle(spawner.id).query<{ status: string }>('thread');
    expect(closed.status).toBe('cancelled');
    const thread = await handle.query<{ status: string }>('thread');
    expect(thread.status).toBe('cancelled');
    expect((await service.snapshot()).records.map((record) => record.thread.name)).not.toContain('never');
  });
}, 300_000);
