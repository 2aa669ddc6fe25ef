// The scenario of scripts/record-histories.ts `--cancel-releasing` (patch `cancelWhileReleasing`): a
// cancel request that reaches a root run, and then an agent, while it waits out its pacing timer before
// it continues as new. Each is kept busy until one of its young runs is due (test/helpers/pacing.ts);
// the root shuts its tree down, the agent ends as a close ends it, then each run ends as cancelled.
import type { Client } from '@temporalio/client';
import { ThreadControls } from '../client/thread-controls';
import { attachRecorder } from './record-attach';
import { cancelWhilePacing } from '../test/helpers/pacing';
import { idleAgent, untilClosed, untilTurns } from '../test/helpers/runs';

const log = (line: string) => process.stderr.write(`[record-histories] ${line}\n`);

export async function recordCancelWhileReleasing(client: Client, taskQueue: string): Promise<void> {
  const attach = () =>
    attachRecorder(client, taskQueue, { continueAsNewAfterEvents: 100, grant: { idleTimeoutMs: 600_000 } });
  const service = await attach();
  const below = await service.rootControls().spawn(idleAgent('below'));
  await untilTurns(service, below.id, 1);
  const asBelow = new ThreadControls(service.handle, await service.capabilityOf(below.id));
  await cancelWhilePacing(client, service.rootThreadId, (n) =>
    asBelow.sendMessage({ recipient: service.rootThreadId, content: `m${n}` }),
  );
  log(`root cancelled while it released: ${await untilClosed(client, service.rootThreadId)}`);
  log(`its sub-agent: ${await untilClosed(client, below.id)}`);

  const other = await attach();
  const root = other.rootControls();
  const busy = await root.spawn(idleAgent('busy'));
  await untilTurns(other, busy.id, 1);
  await cancelWhilePacing(client, busy.id, (n) => root.sendMessage({ recipient: busy.id, content: `m${n}` }));
  log(`agent cancelled while it released: ${await untilClosed(client, busy.id)}`);
  await other.shutdown();
}
