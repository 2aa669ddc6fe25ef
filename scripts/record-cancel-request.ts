// The cancel-request scenario of scripts/record-histories.ts (`--cancel`, patch `cancelRequestStops`):
// Temporal's own cancel request — the Web UI's Cancel, `temporal workflow cancel` — sent to an idle
// agent, to an agent waiting for an answer mid-turn, and then to the root run with a live agent, so the
// golden histories hold each workflow's stop on that path (workflows/cancel-request.ts).
import type { Client } from '@temporalio/client';
import { attachRecorder } from './record-attach';
import type { ScriptStepShape } from '../domain/schemas';
import { eventually, untilTurns } from '../test/helpers/runs';

const log = (line: string) => process.stderr.write(`[record-histories] ${line}\n`);

const script = (...steps: ScriptStepShape[]) => ({ type: 'scripted' as const, turns: [steps] });

export async function recordCancelRequest(client: Client, taskQueue: string): Promise<void> {
  const service = await attachRecorder(client, taskQueue, { grant: { idleTimeoutMs: 600_000 } });
  const root = service.rootControls();
  const closed = async (workflowId: string) =>
    eventually(
      async () => (await client.workflow.getHandle(workflowId).describe()).status.name,
      (status) => status !== 'RUNNING',
      `${workflowId} to close`,
    );
  const idle = await root.spawn({
    name: 'idle',
    task: 'answer once',
    kernel: script({ type: 'reply', text: 'done' }),
  });
  const asker = await root.spawn({
    name: 'asker',
    task: 'ask and wait',
    kernel: script({ type: 'ask', kind: 'approval', prompt: 'May I?' }, { type: 'reply', text: '{{last}}' }),
  });
  const kept = await root.spawn({
    name: 'kept',
    task: 'answer once',
    kernel: script({ type: 'reply', text: 'done' }),
  });
  await untilTurns(service, idle.id, 1);
  await untilTurns(service, kept.id, 1);
  for (const agent of [idle, asker]) {
    await client.workflow.getHandle(agent.id).cancel();
    log(`cancelled ${agent.name}: ${await closed(agent.id)}`);
  }
  await eventually(
    () => root.loadThread(asker.id),
    (thread) => thread?.status === 'cancelled',
    'the root to list the asker cancelled',
  );
  await client.workflow.getHandle(service.rootThreadId).cancel();
  log(`cancelled the root run: ${await closed(service.rootThreadId)}, kept: ${await closed(kept.id)}`);
}
