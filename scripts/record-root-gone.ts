// The scenario of scripts/record-histories.ts `--root-gone` (patch `rootGoneEndsThread`): a root run
// terminated from outside; its idle sub-agent, asked for a turn, learns at the turn's first report that
// the root is gone and ends as the root's close would end it.
import type { Client } from '@temporalio/client';
import { attachRecorder } from './record-attach';
import { sleeperAfterReady, untilTurns } from '../test/helpers/runs';

export async function recordRootGone(client: Client, taskQueue: string): Promise<void> {
  const service = await attachRecorder(client, taskQueue);
  const root = service.rootControls();
  const kid = await root.spawn(sleeperAfterReady('kid'));
  await untilTurns(service, kid.id, 1);
  await client.workflow.getHandle(service.rootThreadId).terminate('recorded: a root terminated from outside');
  await root.sendMessage({ recipient: kid.id, content: 'work', triggerTurn: true });
  await client.workflow.getHandle(kid.id).result();
}
