import type { Client, WorkflowHandle } from '@temporalio/client';
import { randomUUID } from 'node:crypto';
import { z } from 'zod';
import {
  closeConversationUpdate,
  conversationSummaryQuery,
  publishSignal,
  publishUpdate,
  resolveNotificationUpdate,
} from '../domain/conversation-messages';
import {
  CloseResult,
  ConversationSummary,
  InteractionAnswer,
  InteractionResolution,
  NotificationDraft,
  PublishReceipt,
  PublishRequest,
} from '../domain/conversation-schemas';
import { KitError, objectInput, parseInput } from '../domain/errors';
import { ConversationId, newId, parseId, relatedId, RequestId, ThreadId } from '../domain/ids';
import { NotificationBody, RemoteTarget } from '../domain/schemas';
import type { conversationWorkflow } from '../workflows/conversation-workflow';
import { ConversationWorkflowInput } from '../workflows/conversation-input';
import type { ReadingClient } from './cancel';
import { checkClient, kitCall } from './errors';
import { checkUpdateBytes, maxPublishUpdateBytes } from '../domain/answer-bounds';
import { jsonBytes } from '../domain/bytes';
import { executeUpdate } from './updates';
import { Capability } from '../domain/capability';
import { resolveInteractionUpdate } from '../domain/messages';
import {
  conversationReusePolicy,
  conversationStartOperation,
  startingConversation,
  type ConversationStartOptions,
} from './conversation-start';

export { conversationStartOperation, type ConversationStartOptions } from './conversation-start';

/** A notification to publish: a body, plus an id (for idempotent re-publishing) and time if you have them. */
export const NotificationDraftInput = z
  .object({ id: z.string().optional(), createdAt: z.string().optional(), body: NotificationBody })
  .strict();
export type NotificationDraftInput = z.input<typeof NotificationDraftInput>;

/** How many drafts travel in one publish signal (well under Temporal's 2 MiB payload limit). */
export const publishBatchSize = 500;

/** A handle on the conversation workflow's current run (never pinned to one run: it continues as new). */
export function conversationHandle(
  client: Pick<Client, 'workflow'> | ReadingClient,
  conversationId: string,
): WorkflowHandle<typeof conversationWorkflow> {
  return client.workflow.getHandle<typeof conversationWorkflow>(
    parseId('conversation', conversationId, 'conversationId'),
  );
}

/**
 * SPEC S2.4: the options of a call that may start conversation `conversationId`, checked before anything
 * is sent, as the workflow would check them (a conversation started with settings it refuses would fail
 * and keep its id). Answers the conversation's id and the mirror's.
 */
export function checkStartOptions(
  client: unknown,
  conversationId: unknown,
  options: ConversationStartOptions & { mirrorInteractionsTo?: string },
  what: string,
): { id: ConversationId; mirror: ConversationId | undefined } {
  checkClient(client, what);
  const id = parseId('conversation', conversationId, 'conversationId');
  objectInput(options, `${what} options`);
  parseInput(RemoteTarget.shape.taskQueue, options.taskQueue, 'taskQueue');
  parseInput(
    ConversationWorkflowInput,
    { ...objectInput(options.settings ?? {}, 'settings'), conversationId: id },
    'settings',
  );
  if (options.capability !== undefined) parseInput(Capability, options.capability, 'capability');
  const mirror = options.mirrorInteractionsTo
    ? parseId('conversation', options.mirrorInteractionsTo, 'mirrorInteractionsTo')
    : undefined;
  return { id, mirror };
}

function toDrafts(notifications: readonly NotificationDraftInput[]): NotificationDraft[] {
  if (!Array.isArray(notifications))
    throw KitError.protocol('invalid notifications: expected an array of notification drafts', {
      fields: ['notifications'],
    });
  return notifications.map((notification, index) => {
    const parsed = parseInput(NotificationDraftInput, notification, `notifications[${index}]`);
    return parseInput(
      NotificationDraft,
      {
        id: parsed.id ?? newId('notification', randomUUID),
        createdAt: parsed.createdAt ?? new Date().toISOString(),
        body: parsed.body,
      },
      `notifications[${index}]`,
    );
  });
}

/** How many bytes of drafts travel in one signal, well under Temporal's 2 MiB payload limit. */
const publishBatchBytes = 1024 * 1024;

/** Splits drafts into batches of at most `size` items and about `maxBytes` bytes. */
function batches<Item>(items: readonly Item[], size: number, maxBytes = publishBatchBytes): Item[][] {
  const result: Item[][] = [];
  let current: Item[] = [];
  let bytes = 0;
  for (const item of items) {
    const itemBytes = jsonBytes(item);
    if (current.length > 0 && (current.length >= size || bytes + itemBytes > maxBytes)) {
      result.push(current);
      current = [];
      bytes = 0;
    }
    current.push(item);
    bytes += itemBytes;
  }
  if (current.length > 0) result.push(current);
  return result;
}

/**
 * Publishes notifications fire-and-forget (S5.2), starting the conversation if it does not exist yet
 * (signal-with-start), in batches of {@link publishBatchSize}. Returns the drafts with the ids assigned.
 * One whose workflow has ended is not started again: Closed ({@link conversationReusePolicy}). A closed
 * conversation drops them (see `refusedAfterClose` in the summary, or use
 * {@link publishNotificationsWithReceipt} to see the Closed error).
 */
export async function publishNotifications(
  client: Client,
  conversationId: string,
  notifications: readonly NotificationDraftInput[],
  options: ConversationStartOptions & { mirrorInteractionsTo?: string },
): Promise<NotificationDraft[]> {
  const { id, mirror } = checkStartOptions(client, conversationId, options, 'publish');
  const drafts = toDrafts(notifications);
  for (const batch of batches(drafts, publishBatchSize)) {
    await startingConversation(id, `publish to ${id}`, () =>
      client.workflow.signalWithStart<typeof conversationWorkflow, [PublishRequest]>('conversationWorkflow', {
        workflowId: id,
        taskQueue: options.taskQueue,
        workflowIdReusePolicy: conversationReusePolicy,
        args: [{ ...options.settings, conversationId: id }],
        signal: publishSignal,
        signalArgs: [
          {
            notifications: batch,
            ...(mirror ? { mirrorInteractionsTo: mirror } : {}),
            ...(options.capability ? { from: options.capability } : {}),
          },
        ],
      }),
    );
  }
  return drafts;
}

/** Publishes one notification body fire-and-forget; see {@link publishNotifications}. */
export async function publishNotification(
  client: Client,
  conversationId: string,
  body: NotificationBody,
  options: ConversationStartOptions & { mirrorInteractionsTo?: string },
): Promise<NotificationDraft> {
  const [draft] = await publishNotifications(client, conversationId, [{ body }], options);
  return draft!;
}

/**
 * Publishes notifications and waits for their seqs, in updates of up to 1,000 drafts and
 * {@link maxPublishUpdateBytes}; a closed conversation answers Closed. When a later update fails, the
 * earlier ones stay published: publishing the same drafts again (same ids) counts them as duplicates.
 */
export async function publishNotificationsWithReceipt(
  client: Client,
  conversationId: string,
  notifications: readonly NotificationDraftInput[],
  options: ConversationStartOptions & { mirrorInteractionsTo?: string },
): Promise<PublishReceipt> {
  const { id, mirror } = checkStartOptions(client, conversationId, options, 'publish');
  const receipt: PublishReceipt = { seqs: [], duplicates: 0 };
  // Each update's arguments are sent back in the task that takes it, so one stays small (SPEC S3.10).
  const drafts = toDrafts(notifications);
  // None is refused by the workflow's own check (Protocol), not answered here.
  const groups = drafts.length ? batches(drafts, publishBatchSize, maxPublishUpdateBytes - 1024) : [drafts];
  for (const batch of groups) {
    const request = {
      notifications: batch,
      ...(mirror ? { mirrorInteractionsTo: mirror } : {}),
      ...(options.capability ? { from: options.capability } : {}),
    };
    checkUpdateBytes(request, 'publish', maxPublishUpdateBytes);
    const { seqs, duplicates } = await startingConversation(id, `publish to ${id}`, () =>
      client.workflow.executeUpdateWithStart(publishUpdate, {
        args: [request],
        startWorkflowOperation: conversationStartOperation(id, options),
      }),
    );
    receipt.seqs.push(...seqs);
    receipt.duplicates += duplicates;
  }
  return receipt;
}

/** Which interaction to resolve: a received notification, or its thread and request ids. */
export type InteractionTarget = { body: NotificationBody } | { threadId: string; requestId: string };

/** Who answers: the capability of the interaction's thread or an ancestor (the root's, usually), and a name. */
export interface ResolveOptions {
  capability?: Capability;
  /** Who answers, for the audit trail (a person's or a service's name). */
  name?: string;
}

/**
 * Answers an interaction (S5.4), wherever it was received (a mirror in the root conversation included,
 * S5.9). A thread's interaction goes straight to the agent that asked (SPEC S3.1), with a capability of
 * that thread or an ancestor (SPEC S3.9); it wakes and settles the item in its conversation and the
 * root's. An interaction of a standalone conversation is answered at that conversation. Same answer
 * again → the same resolution; a different answer → Conflict; an answer of the wrong kind → Protocol.
 */
export async function resolveNotification(
  client: Client,
  target: InteractionTarget,
  answer: InteractionAnswer,
  options: ResolveOptions = {},
): Promise<InteractionResolution> {
  checkClient(client, 'resolveNotification');
  let threadId: ThreadId;
  let requestId: RequestId;
  const checked = objectInput(target, 'target');
  if ('body' in checked) {
    const body = objectInput(checked.body, 'target.body');
    if (body.type !== 'interaction') {
      throw KitError.protocol(
        `body.type: only interactions are resolved, this notification is a ${String(body.type)}`,
        { fields: ['body.type'] },
      );
    }
    threadId = parseId('thread', body.threadId, 'body.threadId');
    requestId = parseId('request', body.requestId, 'body.requestId');
  } else {
    threadId = parseId('thread', checked.threadId, 'threadId');
    requestId = parseId('request', checked.requestId, 'requestId');
  }
  options = objectInput(options ?? {}, 'resolve options');
  const checkedAnswer = parseInput(InteractionAnswer, answer, 'answer');
  if (options.capability) {
    const capability = parseInput(Capability, options.capability, 'capability');
    const request = { requestId, answer: checkedAnswer, ...(options.name ? { name: options.name } : {}) };
    checkUpdateBytes(request, 'resolve request');
    return executeUpdate(
      client.workflow.getHandle(threadId),
      resolveInteractionUpdate,
      [capability, request],
      `resolve ${requestId} at ${threadId}`,
    );
  }
  const origin = relatedId('conversation', threadId);
  checkUpdateBytes({ requestId, answer: checkedAnswer }, 'resolve request');
  return executeUpdate(
    conversationHandle(client, origin),
    resolveNotificationUpdate,
    [{ requestId, answer: checkedAnswer }],
    `resolve ${requestId} in ${origin}`,
  );
}

/**
 * Closes a conversation (S5.6): receivers drain then end; later publishes are refused. Idempotent. A
 * thread's conversation needs the capability of that thread or an ancestor (SPEC S3.9).
 */
export async function closeConversation(
  client: Client,
  conversationId: string,
  options: { capability?: Capability } = {},
): Promise<CloseResult> {
  return executeUpdate(
    conversationHandle(client, conversationId),
    closeConversationUpdate,
    [options.capability ? { from: options.capability } : {}],
    `close ${conversationId}`,
  );
}

/** Counts, lease holder and closed flag of a conversation (read-only). */
export async function conversationSummary(
  client: Client,
  conversationId: string,
): Promise<ConversationSummary> {
  return kitCall(`summary of ${conversationId}`, () =>
    conversationHandle(client, conversationId).query(conversationSummaryQuery),
  );
}
