// The scenario of scripts/record-histories.ts `--spawn-keyed` (patch `spawnKeyedByUpdate`): a raw client's
// spawn update with no request id, the root pushed through continue-as-new, and the same update sent
// again on the new run, which answers the thread the first attempt spawned.
import type { Client } from '@temporalio/client';
import { attachRecorder } from './record-attach';
import { spawnUpdate } from '../domain/messages';
import { eventually, untilTurns } from '../test/helpers/runs';

const log = (line: string) => process.stderr.write(`[record-histories] ${line}\n`);

export async function recordSpawnKeyedByUpdate(client: Client, taskQueue: string): Promise<void> {
  const service = await attachRecorder(client, taskQueue, { continueAsNewAfterEvents: 100 });
  const root = service.rootControls();
  const handle = client.workflow.getHandle(service.rootThreadId);
  const request = {
    task: 'spawned once by a raw client',
    name: 'raw',
    fork: { type: 'none' as const },
    kernel: { type: 'scripted' as const, turns: [[{ type: 'reply' as const, text: 'done' }]] },
  };
  const updateId = `raw-spawn-${service.rootThreadId}`;
  const first = await handle.executeUpdate(spawnUpdate, { args: [root.capability, request], updateId });
  await untilTurns(service, first.id, 1);
  const firstRun = (await handle.describe()).runId;
  await eventually(
    async () => {
      await root.wait({ threadIds: [first.id], timeoutMs: 0 });
      return (await handle.describe()).runId;
    },
    (runId) => runId !== firstRun,
    'the root to continue as new',
    120_000,
  );
  const again = await handle.executeUpdate(spawnUpdate, { args: [root.capability, request], updateId });
  log(`retried on the next run: ${again.id === first.id ? 'the same thread' : 'ANOTHER THREAD'}`);
  await service.shutdown();
}
