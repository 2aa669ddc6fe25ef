// The scenario of scripts/record-histories.ts `--retired-pages` (patch `retiredPagesEnd`): a thread's
// conversation that nobody read was paged, and retires when its retention has passed; its page
// workflows are asked to cancel.
import type { Client } from '@temporalio/client';
import { attachRun, eventually, untilClosed, untilTurns } from '../test/helpers/runs';

const log = (line: string) => process.stderr.write(`[record-histories] ${line}\n`);

export async function recordRetiredPages(client: Client, taskQueue: string): Promise<void> {
  const service = await attachRun(client, taskQueue, {
    grant: { owner: 'tests', conversationRetentionMs: 1_000 },
  });
  const root = service.rootControls();
  const writer = await root.spawn({
    task: 'answer at length',
    name: 'writer',
    kernel: { type: 'scripted', turns: [[{ type: 'reply', text: 'w'.repeat(95_000) }]] },
  });
  for (let turn = 1; turn <= 8; turn++) {
    if (turn > 1) await root.sendMessage({ recipient: writer.id, content: `go ${turn}`, triggerTurn: true });
    await untilTurns(service, writer.id, turn);
  }
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
