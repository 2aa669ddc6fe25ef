import type { Client } from '@temporalio/client';
import { randomUUID } from 'node:crypto';
import { setTimeout as delay } from 'node:timers/promises';
import {
  ConversationNotificationReceiver,
  type OpenReceiverOptions,
} from '../../client/conversation-receiver';
import { ErrorKind, KitError } from '../../domain/errors';
import { newId, relatedId } from '../../domain/ids';
import type { ConversationNotification, NotificationBody } from '../../domain/schemas';
import { publishSignal } from '../../domain/conversation-messages';
import type { ConversationWorkflowInput } from '../../workflows/conversation-input';

/** A fresh thread id and its conversation id. */
export function newConversation(): {
  threadId: `thread_${string}`;
  conversationId: `conversation_${string}`;
} {
  const threadId = newId('thread', randomUUID);
  return { threadId, conversationId: relatedId('conversation', threadId) };
}

export const messageBody = (text: string): NotificationBody => ({ type: 'message', text });

/** An interaction body, as agents publish it. */
export type InteractionBody = Extract<NotificationBody, { type: 'interaction' }>;

export const approvalBody = (threadId: `thread_${string}`, prompt = 'may I?'): InteractionBody => ({
  type: 'interaction',
  requestId: newId('request', randomUUID),
  threadId,
  kind: 'approval',
  prompt,
});

/** The text of a message notification, or its body type. */
export const label = (notification: ConversationNotification | null): string =>
  notification === null
    ? 'end'
    : notification.body.type === 'message'
      ? notification.body.text
      : notification.body.type;

/** Receives `count` notifications. */
export async function receiveMany(
  receiver: ConversationNotificationReceiver,
  count: number,
): Promise<ConversationNotification[]> {
  const received: ConversationNotification[] = [];
  while (received.length < count) {
    const notification = await receiver.recv();
    if (notification === null) throw new Error(`end-of-stream after ${received.length} of ${count}`);
    received.push(notification);
  }
  return received;
}

/** Opens a receiver, waiting out a previous holder's lease (Conflict) for up to `attempts` tries. */
export async function openWhenLeaseFree(
  client: Client,
  conversationId: string,
  options: OpenReceiverOptions,
  attempts = 100,
): Promise<ConversationNotificationReceiver> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await ConversationNotificationReceiver.open(client, conversationId, options);
    } catch (error) {
      if (!(error instanceof KitError && error.kind === ErrorKind.Conflict) || attempt >= attempts)
        throw error;
      await delay(200);
    }
  }
}

/**
 * A publish as a raw Temporal client makes it, bypassing agents-kit's client: it starts conversation
 * `conversationId` (whatever ran under that id before) with one message of `text`, proving nothing.
 */
export const rawStartedPublish = (client: Client, taskQueue: string, conversationId: string, text: string) =>
  client.workflow.signalWithStart('conversationWorkflow', {
    workflowId: conversationId,
    taskQueue,
    args: [{ conversationId } as ConversationWorkflowInput],
    signal: publishSignal,
    signalArgs: [
      {
        notifications: [
          {
            id: newId('notification', randomUUID),
            createdAt: new Date().toISOString(),
            body: messageBody(text),
          },
        ],
      },
    ],
  });
