// The scenario of scripts/record-histories.ts `--ownerless` (patch `ownerlessNotForTrees`): an item that
// somebody publishes, by a raw start, into a thread's conversation nobody owns yet while a receiver with
// the root's capability waits there (it gets `idle`, then is refused); and a root whose conversation
// somebody filled before it started, which its claim leaves owner-less.
import { randomUUID } from 'node:crypto';
import type { Client } from '@temporalio/client';
import { ConversationNotificationReceiver } from '../client/conversation-receiver';
import { attachRecorder } from './record-attach';
import { newId, relatedId } from '../domain/ids';
import { rawStartedPublish } from '../test/helpers/conversations';

const log = (line: string) => process.stderr.write(`[record-histories] ${line}\n`);

export async function recordOwnerless(client: Client, taskQueue: string): Promise<void> {
  const forge = (conversationId: string) => rawStartedPublish(client, taskQueue, conversationId, 'forged');
  const rootThreadId = newId('thread', randomUUID);
  await forge(relatedId('conversation', rootThreadId));
  const service = await attachRecorder(client, taskQueue, { rootThreadId });
  const waitedOn = relatedId('conversation', newId('thread', randomUUID));
  const receiver = await ConversationNotificationReceiver.open(client, waitedOn, {
    taskQueue,
    capability: service.rootCapability,
    pollWaitMs: 1_000,
  });
  const received = receiver.recv().then(
    () => 'delivered',
    (error: unknown) => `refused: ${String(error)}`,
  );
  // The receive is waiting there (a long poll) when the item lands.
  await new Promise((done) => setTimeout(done, 500));
  await forge(waitedOn);
  log(`a receiver waiting on an owner-less conversation: ${(await received).slice(0, 80)}`);
  await receiver.dispose();
  await service.shutdown();
  await client.workflow.getHandle(waitedOn).terminate('recorded');
}
