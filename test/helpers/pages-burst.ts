import type { Client } from '@temporalio/client';
import type { temporal } from '@temporalio/proto';
import { ConversationNotificationReceiver } from '../../client/conversation-receiver';
import { publishNotifications } from '../../client/conversations';
import { pageRequestSignal } from '../../domain/conversation-messages';
import type { ConversationNotification } from '../../domain/schemas';
import { label, messageBody, newConversation, receiveMany } from './conversations';

/** Small pages and an early continue-as-new, so a burst spills many pages while the run is due. */
export const burstSettings = { continueAsNewAfterEvents: 20, backlogHighWaterBytes: 1024, pageBytes: 512 };

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
  const items = (from: number, length: number) =>
    Array.from({ length }, (_, index) => ({ body: messageBody(`item ${from + index} ${'x'.repeat(40)}`) }));
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
