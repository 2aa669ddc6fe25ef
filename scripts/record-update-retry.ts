// Two scenarios of scripts/record-histories.ts, each an update retried with its id after the workflow it
// went to continued as new. `--long-ids` (patch `longUpdateIdsRemembered`): a message to a sub-agent and
// a take of the root's messages, both with update ids longer than the answer log keeps. `--policy-retry`
// (patch `policyChangeRemembered`): an approval policy change, then a newer one, then the first again.
import type { Client } from '@temporalio/client';
import { attachRecorder } from './record-attach';
import { sendMessageUpdate, setApprovalPolicyUpdate, takeRootMessagesUpdate } from '../domain/messages';
import { ThreadControls } from '../client/thread-controls';
import { pokeRoot, untilContinuedAsNew, untilTurns } from '../test/helpers/runs';

const log = (line: string) => process.stderr.write(`[record-histories] ${line}\n`);

export async function recordLongUpdateIds(client: Client, taskQueue: string): Promise<void> {
  const service = await attachRecorder(client, taskQueue, { continueAsNewAfterEvents: 100 });
  const root = service.rootControls();
  const child = await root.spawn({ task: 'receive once', name: 'long-ids' });
  await untilTurns(service, child.id, 1);
  const agent = client.workflow.getHandle(child.id);
  const message = [root.capability, { recipient: child.id, content: 'long id', triggerTurn: false }] as const;
  const messageId = `retry-${child.id}-${'x'.repeat(250)}`;
  const first = await agent.executeUpdate(sendMessageUpdate, { args: [...message], updateId: messageId });
  await untilContinuedAsNew(client, child.id, () => root.interrupt(child.id));
  const again = await agent.executeUpdate(sendMessageUpdate, { args: [...message], updateId: messageId });
  log(`message retried on the agent's next run: seq ${first.seq} then ${again.seq}`);

  // The root's own log: a take of its messages with a long id, answered the same on its next run.
  const asChild = new ThreadControls(service.handle, await service.capabilityOf(child.id));
  await asChild.sendMessage({ recipient: service.rootThreadId, content: 'for the root', triggerTurn: false });
  const rootHandle = client.workflow.getHandle(service.rootThreadId);
  const takeId = `take-${service.rootThreadId}-${'y'.repeat(250)}`;
  const taken = await rootHandle.executeUpdate(takeRootMessagesUpdate, {
    args: [root.capability],
    updateId: takeId,
  });
  await untilContinuedAsNew(client, service.rootThreadId, pokeRoot(service, child.id));
  const takenAgain = await rootHandle.executeUpdate(takeRootMessagesUpdate, {
    args: [root.capability],
    updateId: takeId,
  });
  log(`root messages taken ${taken.length}, retried on its next run ${takenAgain.length}`);
  await service.shutdown();
}

export async function recordPolicyRetry(client: Client, taskQueue: string): Promise<void> {
  const service = await attachRecorder(client, taskQueue, {
    continueAsNewAfterEvents: 100,
    approvalPolicy: {},
  });
  const root = service.rootControls();
  const child = await root.spawn({ task: 'idle', name: 'policy-poke' });
  const handle = client.workflow.getHandle(service.rootThreadId);
  const updateId = `policy-${service.rootThreadId}`;
  const change = { neverAsk: ['tool_a'] };
  const first = await handle.executeUpdate(setApprovalPolicyUpdate, {
    args: [root.capability, change],
    updateId,
  });
  await service.setApprovalPolicy({ neverAsk: ['tool_b'] });
  await untilContinuedAsNew(client, service.rootThreadId, pokeRoot(service, child.id));
  const again = await handle.executeUpdate(setApprovalPolicyUpdate, {
    args: [root.capability, change],
    updateId,
  });
  const now = await service.approvalPolicy();
  log(
    `policy change retried on the next run: version ${first.version} then ${again.version}, now ${now.version}`,
  );
  await service.shutdown();
}
