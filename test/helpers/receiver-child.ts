// A receiver in its own process, for the SIGKILL test: receives COUNT notifications, prints each seq
// on its own line, then holds the lease (renewing it) without receiving more until it is killed.
import { Client } from '@temporalio/client';
import { connectTest } from './connection';
import { ConversationNotificationReceiver } from '../../client/conversation-receiver';

async function main(): Promise<void> {
  const [address, conversationId, taskQueue, countText] = process.argv.slice(2);
  if (!address || !conversationId || !taskQueue || !countText) {
    throw new Error('usage: receiver-child <address> <conversationId> <taskQueue> <count>');
  }
  const connection = await connectTest({ address });
  const client = new Client({ connection });
  const receiver = await ConversationNotificationReceiver.open(client, conversationId, {
    taskQueue,
    ttlMs: 1000,
  });
  for (let received = 0; received < Number(countText); received++) {
    const notification = await receiver.recv();
    if (notification === null) throw new Error('end-of-stream');
    process.stdout.write(`${notification.seq}\n`);
  }
  process.stdout.write('holding\n');
  setInterval(() => undefined, 60_000);
}

main().catch((error: unknown) => {
  process.stderr.write(`receiver-child: ${String(error)}\n`);
  process.exit(1);
});
