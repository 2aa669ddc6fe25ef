import type { Client } from '@temporalio/client';
import { setTimeout as delay } from 'node:timers/promises';
import { ConversationNotificationReceiver } from '../../client/conversation-receiver';
import { conversationSummary, publishNotifications } from '../../client/conversations';
import type { ConversationNotification } from '../../domain/schemas';
import type { ConversationWorkflowInput } from '../../workflows/conversation-workflow';
import { label, messageBody, newConversation } from './conversations';
import { type RunHistory, runHistories } from './run-histories';
import { seconds } from './scale-scenario';

export interface NotificationsOutcome {
  conversationId: string;
  received: ConversationNotification[];
  /** The texts received, in order (`'0'` … `String(n - 1)`), checked by the caller. */
  labels: string[];
  lastSeq: number;
  generation: number;
  histories: RunHistory[];
  durations: { totalS: number };
}

/**
 * One conversation receives `notifications` message notifications, published in signal batches of up
 * to 1,000 while one receiver consumes them; publishers stay at most `lead` items ahead, because the
 * unreceived backlog travels in the continue-as-new snapshot (see RELIABILITY.md, Scale).
 */
export async function manyNotifications(options: {
  client: Client;
  taskQueue: string;
  notifications: number;
  settings?: Omit<ConversationWorkflowInput, 'conversationId' | 'snapshot' | 'generation'>;
  lead?: number;
  log?: (line: string) => void;
}): Promise<NotificationsOutcome> {
  const { client, taskQueue, notifications: total } = options;
  const log = options.log ?? (() => undefined);
  const lead = options.lead ?? 2000;
  const { conversationId } = newConversation();
  const settings = options.settings ? { settings: options.settings } : {};
  const started = performance.now();
  await publishNotifications(client, conversationId, [{ body: messageBody('0') }], {
    taskQueue,
    ...settings,
  });
  const receiver = await ConversationNotificationReceiver.open(client, conversationId, {
    taskQueue,
    ...settings,
  });
  const received: ConversationNotification[] = [];
  let publishError: unknown;
  const publishing = (async () => {
    for (let first = 1; first < total; first += 1000) {
      while (first - received.length > lead) await delay(20);
      const texts = Array.from({ length: Math.min(1000, total - first) }, (_, index) =>
        String(first + index),
      );
      await publishNotifications(
        client,
        conversationId,
        texts.map((text) => ({ body: messageBody(text) })),
        { taskQueue },
      );
    }
  })().catch((error: unknown) => {
    publishError = error;
  });
  try {
    while (received.length < total) {
      const notification = await receiver.recv();
      if (notification === null) throw new Error(`end-of-stream after ${received.length}`);
      received.push(notification);
      if (received.length % 10_000 === 0)
        log(`  received ${received.length}/${total} (${seconds(started)} s)`);
      if (publishError) throw publishError;
    }
    await publishing;
  } finally {
    await receiver.dispose();
  }
  const totalS = seconds(started);
  const summary = await conversationSummary(client, conversationId);
  const histories = await runHistories(client, conversationId, summary.generation + 1);
  await client.workflow.getHandle(conversationId).terminate('scale scenario done');
  return {
    conversationId,
    received,
    labels: received.map(label),
    lastSeq: summary.lastSeq,
    generation: summary.generation,
    histories,
    durations: { totalS },
  };
}
