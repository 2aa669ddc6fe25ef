// The scenario of scripts/record-histories.ts `--cancel-subtree` (patch `cancelClosesSubtree`): an agent
// with a live sub-agent is cancelled from outside (Temporal's cancel request); when its end reaches the
// root run, the root closes the sub-agent, as a close of the agent would have.
import type { Client } from '@temporalio/client';
import { attachRun, eventually, leadWithHelper } from '../test/helpers/runs';

const log = (line: string) => process.stderr.write(`[record-histories] ${line}\n`);

export async function recordCancelClosesSubtree(client: Client, taskQueue: string): Promise<void> {
  const service = await attachRun(client, taskQueue);
  const { lead, helper } = await leadWithHelper(service);
  await client.workflow.getHandle(lead.id).cancel();
  const closed = await eventually(
    async () => (await client.workflow.getHandle(helper.id).describe()).status.name,
    (status) => status !== 'RUNNING',
    'the helper to be closed',
  );
  log(`cancelled the lead; its helper: ${closed}`);
  await service.shutdown();
}
