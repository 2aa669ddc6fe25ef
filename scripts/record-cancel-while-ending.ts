// The scenario of scripts/record-histories.ts `--cancel-ending` (patch `cancelWhileEnding`): a cancel
// request that comes while a workflow ends by itself. An agent gets its root run's close signal and
// Temporal's cancel request in one task (its worker stopped meanwhile, so both wait for the next one),
// and a root run is cancelled while its shutdown waits out the grace period for a sub-agent no worker
// runs; each ending finishes, then the run ends as cancelled (workflows/cancel-request.ts).
import type { Client, Connection } from '@temporalio/client';
import { NativeConnection } from '@temporalio/worker';
import { createActivities } from '../activities';
import { attachRecorder } from './record-attach';
import { createAgentWorker } from '../workers/create-worker';
import { untilClosed, untilHistoryHolds, untilTurns } from '../test/helpers/runs';

const log = (line: string) => process.stderr.write(`[record-histories] ${line}\n`);

const idle = (name: string) => ({
  name,
  task: 'answer once',
  kernel: { type: 'scripted' as const, turns: [[{ type: 'reply' as const, text: 'done' }]] },
});

export async function recordCancelWhileEnding(client: Client, taskQueue: string): Promise<void> {
  const holds = (workflowId: string, text: string) => untilHistoryHolds(client, workflowId, text);
  const closed = (workflowId: string) => untilClosed(client, workflowId);
  const later = `${taskQueue}-later`;
  const connection = await NativeConnection.connect({
    address: (client.connection as Connection).options.address,
  });
  const workerOn = async () => {
    const worker = await createAgentWorker({ connection, taskQueue: later, activities: createActivities() });
    return { worker, running: worker.run() };
  };
  try {
    const service = await attachRecorder(client, taskQueue, {
      shutdownGraceMs: 5_000,
      grant: {
        idleTimeoutMs: 600_000,
        remoteTargets: { later: { taskQueue: later }, void: { taskQueue: `${taskQueue}-void` } },
      },
    });
    const root = service.rootControls();
    const first = await workerOn();
    const agent = await root.spawnRemote({ target: 'later', ...idle('closed-twice') });
    await untilTurns(service, agent.id, 1);
    first.worker.shutdown();
    await first.running;
    await root.close(agent.id);
    await holds(agent.id, '"signalName":"close-thread"');
    await client.workflow.getHandle(agent.id).cancel();
    await holds(agent.id, 'EVENT_TYPE_WORKFLOW_EXECUTION_CANCEL_REQUESTED');
    const second = await workerOn();
    log(`closed and cancelled in one task: ${await closed(agent.id)}`);
    second.worker.shutdown();
    await second.running;

    const lost = await root.spawnRemote({ target: 'void', task: 'never runs' });
    const fine = await root.spawn(idle('fine'));
    await untilTurns(service, fine.id, 1);
    const shutdown = service.shutdown();
    await holds(service.rootThreadId, '"signalName":"close-thread"');
    await client.workflow.getHandle(service.rootThreadId).cancel();
    const report = await shutdown;
    log(`cancelled during its shutdown: ${await closed(service.rootThreadId)}, ${JSON.stringify(report)}`);
    await client.workflow.getHandle(lost.id).terminate('never ran: its target has no worker');
  } finally {
    await connection.close();
  }
}
