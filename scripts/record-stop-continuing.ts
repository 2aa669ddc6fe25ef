// The scenario of scripts/record-histories.ts `--stop-continuing` (patch `stopWhileContinuing`): a
// shutdown that reaches a root run, and then a close that reaches an agent, while it waits out its
// pacing timer before it continues as new (test/helpers/pacing.ts). Each ends in that run: the root
// closes its tree, the agent ends as a close ends it. A stop that reached a run after it continued as
// new takes the ordinary path; the run kept is the one that took the patch (tried up to 4 times).
import type { Client } from '@temporalio/client';
import { ThreadControls } from '../client/thread-controls';
import { attachRecorder } from './record-attach';
import { actWhilePacing } from '../test/helpers/pacing';
import { patchesOf } from '../test/helpers/histories';
import { idleAgent, untilClosed, untilTurns } from '../test/helpers/runs';

const log = (line: string) => process.stderr.write(`[record-histories] ${line}\n`);
const patch = 'stopWhileContinuing';

/** Whether `workflowId` closed and its last run took the patch. */
async function tookPatch(client: Client, workflowId: string): Promise<boolean> {
  log(`${workflowId}: ${await untilClosed(client, workflowId)}`);
  const events = (await client.workflow.getHandle(workflowId).fetchHistory()).events ?? [];
  return patchesOf(events).includes(patch);
}

export async function recordStopWhileContinuing(client: Client, taskQueue: string): Promise<void> {
  const attach = () =>
    attachRecorder(client, taskQueue, { continueAsNewAfterEvents: 100, grant: { idleTimeoutMs: 600_000 } });
  let taken = false;
  for (let attempt = 1; attempt <= 4 && !taken; attempt++) {
    const service = await attach();
    const below = await service.rootControls().spawn(idleAgent('below'));
    await untilTurns(service, below.id, 1);
    const asBelow = new ThreadControls(service.handle, await service.capabilityOf(below.id));
    await actWhilePacing(
      client,
      service.rootThreadId,
      (n) => asBelow.sendMessage({ recipient: service.rootThreadId, content: `m${n}` }),
      async () => (await service.shutdown(), true),
    );
    taken = await tookPatch(client, service.rootThreadId);
  }
  if (!taken) throw new Error('no shutdown reached a root while it waited to continue as new');

  const other = await attach();
  const root = other.rootControls();
  taken = false;
  for (let attempt = 1; attempt <= 4 && !taken; attempt++) {
    const busy = await root.spawn(idleAgent(`busy${attempt}`));
    await untilTurns(other, busy.id, 1);
    await actWhilePacing(
      client,
      busy.id,
      (n) => root.sendMessage({ recipient: busy.id, content: `m${n}` }),
      async () => (await root.close(busy.id), true),
    );
    taken = await tookPatch(client, busy.id);
  }
  await other.shutdown();
  if (!taken) throw new Error('no close reached an agent while it waited to continue as new');
}
