// The scenario of scripts/record-histories.ts `--retired-pages` (patch `retiredPagesEnd`): a thread's
// conversation that nobody read was paged, and retires when its retention has passed; its page
// workflows are asked to cancel.
import type { Client } from '@temporalio/client';
import { attachRun, eventually, untilClosed, writerPastHighWater } from '../test/helpers/runs';

const log = (line: string) => process.stderr.write(`[record-histories] ${line}\n`);

export async function recordRetiredPages(client: Client, taskQueue: string): Promise<void> {
  const service = await attachRun(client, taskQueue, {
    grant: { owner: 'tests', conversationRetentionMs: 1_000 },
  });
  const root = service.rootControls();
  const writer = await writerPastHighWater(service);
  await root.close(writer.id);
  log(`the writer's unread conversation: ${await untilClosed(client, writer.conversationId)}`);
  await eventually(
    async () => {
      const open: string[] = [];
      for await (const page of client.workflow.list({
        query: `WorkflowType = "conversationPageWorkflow" AND ExecutionStatus = "Running"`,
      }))
        open.push(page.workflowId);
      return open;
    },
    (open) => open.length === 0,
    'its pages to end',
  );
  await service.shutdown();
}
