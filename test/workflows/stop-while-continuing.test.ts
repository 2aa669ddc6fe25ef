// SPEC S3.5, S4.8, S7.3: a shutdown (root run) or a close (agent) that lands while the run waits out its
// shortest life before continuing as new (patch `stopWhileContinuing`) ends the tree or thread in that
// run. Before, the run answered it and then continued as new anyway: the next run, not told, lived on
// until its idle timeout, and `shutdown()`, which waits for the run to close, waited with it.
// The window: a young run that is due waits out its pacing timer (up to 1.1 s) while it still takes
// updates and signals; runs are kept busy until one waits, then the stop is sent. A stop that reached
// the run after it continued as new takes the ordinary path (no marker); then the test tries again.
import { ThreadControls } from '../../client/thread-controls';
import type { ThreadService } from '../../client/thread-service';
import type { AgentThread } from '../../domain/schemas';
import { ConversationNotificationReceiver } from '../../client/conversation-receiver';
import { attachRun, idleAgent, untilTurns } from '../helpers/runs';
import { actWhilePacing } from '../helpers/pacing';
import { closedAs, expectEndedCancelled } from '../helpers/closing';
import { patchesOf } from '../helpers/histories';
import { suiteWorker, type TestTemporal } from '../helpers/temporal';

let temporal: TestTemporal;
const { taskQueue } = suiteWorker('stop-continuing', (connected) => (temporal = connected));
const patch = 'stopWhileContinuing';
const attempts = 4;

/** Whether the last run of `workflowId` is `runId` and took the patch's path. */
async function stoppedIn(workflowId: string, runId: string): Promise<boolean> {
  await closedAs(temporal.client, workflowId);
  const handle = temporal.client.workflow.getHandle(workflowId);
  if ((await handle.describe()).runId !== runId) return false;
  return patchesOf((await handle.fetchHistory()).events ?? []).includes(patch);
}

test('a root run shut down while it waits to continue as new closes its tree in that run', async () => {
  for (let attempt = 1; attempt <= attempts; attempt++) {
    const service = await attachRun(temporal.client, taskQueue, { continueAsNewAfterEvents: 100 });
    const agent = await service.rootControls().spawn(idleAgent('below'));
    await untilTurns(service, agent.id, 1);
    // The agent's messages to the root grow the root's history (each an update of the root's workflow).
    const asAgent = new ThreadControls(service.handle, await service.capabilityOf(agent.id));
    let report: Awaited<ReturnType<ThreadService['shutdown']>> | undefined;
    const runId = await actWhilePacing(
      temporal.client,
      service.rootThreadId,
      (n) => asAgent.sendMessage({ recipient: service.rootThreadId, content: `m${n}` }),
      async () => {
        // It returns once the run has closed: before the patch, only at the next run's idle timeout.
        report = await service.shutdown();
        return true;
      },
    );
    expect(report).toMatchObject({ cancelled: [agent.id], failed: [], unconfirmed: [] });
    expect(await closedAs(temporal.client, agent.id)).toBe('COMPLETED');
    if (await stoppedIn(service.rootThreadId, runId)) return;
    console.log(`attempt ${attempt}: the shutdown reached the root after it continued as new; again`);
  }
  throw new Error(`no shutdown of ${attempts} reached a root while it waited to continue as new`);
}, 600_000);

test('an agent closed while it waits to continue as new ends in that run and reports its end', async () => {
  const service = await attachRun(temporal.client, taskQueue, { continueAsNewAfterEvents: 100 });
  const root = service.rootControls();
  for (let attempt = 1; attempt <= attempts; attempt++) {
    const agent = await root.spawn(idleAgent(`busy${attempt}`));
    await untilTurns(service, agent.id, 1);
    const receiver = await ConversationNotificationReceiver.open(temporal.client, agent.conversationId, {
      taskQueue,
      capability: service.rootCapability,
      pollWaitMs: 1_000,
    });
    let closed: AgentThread[] = [];
    const runId = await actWhilePacing(
      temporal.client,
      agent.id,
      (n) => root.sendMessage({ recipient: agent.id, content: `m${n}` }),
      async () => {
        closed = await root.close(agent.id);
        return true;
      },
    );
    expect(closed.map((thread) => thread.id)).toEqual([agent.id]);
    const status = await closedAs(temporal.client, agent.id);
    // It ended as a close ends it, and told its root and its conversation.
    await expectEndedCancelled(root, agent.id, receiver);
    await receiver.dispose();
    if (await stoppedIn(agent.id, runId)) {
      expect(status).toBe('COMPLETED');
      expect(await service.counters()).toMatchObject({ live: 0 });
      await service.shutdown();
      return;
    }
    console.log(`attempt ${attempt}: the close reached the agent after it continued as new; again`);
  }
  throw new Error(`no close of ${attempts} reached an agent while it waited to continue as new`);
}, 600_000);
