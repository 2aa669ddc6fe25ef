import { WithStartWorkflowOperation, WorkflowExecutionAlreadyStartedError } from '@temporalio/client';
import { ErrorKind, KitError } from '../domain/errors';
import type { ConversationId } from '../domain/ids';
import type { conversationWorkflow } from '../workflows/conversation-workflow';
import type { ConversationWorkflowInput } from '../workflows/conversation-input';
import type { Capability } from '../domain/capability';
import { loadThreadQuery } from '../domain/messages';
import { describeIfAny, toKitError } from './errors';
import { relatedId } from '../domain/ids';
import type { Client } from '@temporalio/client';

/** Where a conversation workflow runs if a call has to start it, and the settings it starts with. */
export interface ConversationStartOptions {
  taskQueue: string;
  settings?: Omit<ConversationWorkflowInput, 'conversationId' | 'snapshot' | 'generation' | 'owner'>;
  /**
   * The caller's capability (SPEC S3.9), which a thread's conversation requires: it takes notifications
   * only from that thread or its descendants, and is read (receivers) and closed only by that thread or
   * its ancestors — the root's capability serves the whole tree. A reader that sends one is reading a
   * tree's conversation: one that no thread owns (a standalone conversation, or one somebody else started
   * under a thread's id) refuses it with PermissionDenied once it holds anything
   * (workflows/ownerless-readers.ts). Read a standalone conversation without one.
   */
  capability?: Capability;
}

/**
 * SPEC S5.2, S5.10: a conversation id names one stream, from its first run to its end. agents-kit's
 * client starts a conversation that does not exist yet, and uses the running one, but never starts one
 * whose workflow has ended: a thread's conversation that completed after its retention would otherwise
 * come back as a new, empty, owner-less conversation under the thread's id, which anybody could fill.
 * This holds for a standalone conversation too: one an operator terminated (closing one does not end
 * its workflow: it stays, drain-only, S5.6) is not started again; publish to a new id instead. Temporal
 * enforces it for as long as it keeps the ended run (the namespace's retention); a raw client can still
 * start that id, which is why readers with a capability do not trust an owner-less conversation.
 */
export const conversationReusePolicy = 'REJECT_DUPLICATE' as const;

/** Start options that create the conversation workflow when it does not exist yet, or use the running one. */
export function conversationStartOperation(
  conversationId: ConversationId,
  options: ConversationStartOptions,
): WithStartWorkflowOperation<typeof conversationWorkflow> {
  return new WithStartWorkflowOperation<typeof conversationWorkflow>('conversationWorkflow', {
    workflowId: conversationId,
    taskQueue: options.taskQueue,
    args: [{ ...options.settings, conversationId }],
    workflowIdConflictPolicy: 'USE_EXISTING',
    workflowIdReusePolicy: conversationReusePolicy,
  });
}

/**
 * Runs a call that may start conversation `conversationId` (a signal- or update-with-start), as a
 * KitError: `Closed`, naming the conversation, when its workflow has ended (see
 * {@link conversationReusePolicy}); what {@link toKitError} makes of anything else.
 */
export async function startingConversation<Result>(
  conversationId: ConversationId,
  context: string,
  call: () => Promise<Result>,
): Promise<Result> {
  try {
    return await call();
  } catch (error) {
    if (error instanceof WorkflowExecutionAlreadyStartedError)
      throw new KitError(
        ErrorKind.Closed,
        `${context}: conversation ${conversationId} has ended (its thread's retention passed, or its workflow was terminated) and is not started again: use a new conversation id`,
        { conversationId },
        { cause: error },
      );
    throw toKitError(error, context);
  }
}

/**
 * A call may start a conversation that does not exist yet, since its thread's may start after it; but
 * a mistyped id would start one nobody ever writes to, which never ends. A tree's conversation (read
 * with a capability) and the CLI's are only started when the conversation or its thread exists, or
 * (with a capability) when the tree's root has admitted the thread (a spawn starts its workflow in the
 * background, so a receiver opened right after it may come first): NotFound otherwise, nothing started.
 */
export async function checkConversationExists(
  client: Client,
  id: ConversationId,
  context: string,
  capability?: Capability,
): Promise<void> {
  if (await describeIfAny(client, id, context)) return;
  const thread = relatedId('thread', id);
  if (await describeIfAny(client, thread, context)) return;
  if (capability && (await admitted(client, capability, thread))) return;
  throw new KitError(
    ErrorKind.NotFound,
    `${context}: no conversation ${id}, and no thread ${thread} it would belong to: check the id`,
    { conversationId: id },
  );
}

/** Whether the root of `capability`'s tree lists `threadId` in the caller's subtree. */
const admitted = (client: Client, capability: Capability, threadId: string): Promise<boolean> =>
  client.workflow
    .getHandle(capability.rootId)
    .query(loadThreadQuery, capability, threadId)
    .then(
      (answer) => answer.ok && answer.value !== null,
      () => false,
    );
