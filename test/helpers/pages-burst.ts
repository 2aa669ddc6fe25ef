import type { Client } from '@temporalio/client';
import type { temporal } from '@temporalio/proto';
import { ConversationNotificationReceiver } from '../../client/conversation-receiver';
import { publishNotifications } from '../../client/conversations';
import { pageRequestSignal } from '../../domain/conversation-messages';
import type { ConversationNotification } from '../../domain/schemas';
import { label, messageBody, newConversation, receiveMany } from './conversations';

/** Small pages and an early continue-as-new, so a burst spills many pages while the run is due. */
export const burstSettings = { continueAsNewAfterEvents: 20, backlogHighWaterBytes: 1024, pageBytes: 512 };

/** Items `from` to `from + length - 1`, each about a third of a page. */
const items = (from: number, length: number) =>
  Array.from({ length }, (_, index) => ({ body: messageBody(`item ${from + index} ${'x'.repeat(40)}`) }));

/**
 * A receiver reads a conversation to its end, then one publish of `count` items spills most of them at
 * once (a page or so per item) while the receiver waits for the next; it reads them all. Returns the
 * conversation id and the labels received after the first three.
 */
export async function pagesBurst(
  client: Client,
  taskQueue: string,
  count: number,
): Promise<{ conversationId: string; labels: string[] }> {
  const { conversationId } = newConversation();
  const options = { taskQueue, settings: burstSettings };
  await publishNotifications(client, conversationId, items(0, 3), options);
  const receiver = await ConversationNotificationReceiver.open(client, conversationId, { taskQueue });
  try {
    await receiveMany(receiver, 3);
    const reading: Promise<ConversationNotification[]> = receiveMany(receiver, count);
    await publishNotifications(client, conversationId, items(3, count), options);
    const labels = (await reading).map(label);
    return { conversationId, labels };
  } finally {
    await receiver.dispose();
  }
}

/**
 * In the run that started the most page workflows: where its first page request was sent, and where
 * its last page workflow was started (event indexes; the request's is undefined when it sent none).
 */
export function pageRequestAmongCuts(history: temporal.api.history.v1.IHistory): {
  request?: number;
  lastCut: number;
  cuts: number;
} {
  const events = history.events ?? [];
  const cuts = events.flatMap((event, index) =>
    event.startChildWorkflowExecutionInitiatedEventAttributes ? [index] : [],
  );
  const request = events.findIndex(
    (event) =>
      event.signalExternalWorkflowExecutionInitiatedEventAttributes?.signalName === pageRequestSignal.name,
  );
  return { ...(request >= 0 ? { request } : {}), lastCut: cuts.at(-1) ?? -1, cuts: cuts.length };
}

/**
 * `count` items published (in batches of 50) before a receiver opens, spilling a page or so per item; the
 * receiver then reads them all while the conversation keeps continuing as new. Returns the conversation
 * id and the labels received.
 */
export async function pagedBacklogRead(
  client: Client,
  taskQueue: string,
  count: number,
): Promise<{ conversationId: string; labels: string[] }> {
  const { conversationId } = newConversation();
  for (let from = 0; from < count; from += 50) {
    const batch = items(from, Math.min(50, count - from));
    await publishNotifications(client, conversationId, batch, { taskQueue, settings: burstSettings });
  }
  const receiver = await ConversationNotificationReceiver.open(client, conversationId, { taskQueue });
  try {
    return { conversationId, labels: (await receiveMany(receiver, count)).map(label) };
  } finally {
    await receiver.dispose();
  }
}
