import type { ReadingClient } from './cancel';
import { z } from 'zod';
import { ControlRequest, ControlResponse } from '../domain/control';
import { SendMessageRequest } from '../domain/schemas';
import type { HistoryEvent } from './history-tail';
import { payloadArg } from './tree-conversation';
import type { TreeEventBody } from './tree-stream';

/** What a thread's mailbox numbered a message as (MessageReceipt: the message without its content). */
const Receipt = z
  .object({ id: z.string(), sender: z.string(), recipient: z.string(), seq: z.number(), sentAt: z.string() })
  .passthrough();

/** What a thread's own workflow history says of its messages, read in order. */
export interface MailboxReading {
  /**
   * Contents of requests taken, until their answer is seen, by update id or operation id, with the
   * history event that took them (a resumed stream reads again from the oldest, so no receipt is lost).
   */
  pending: Map<string, { content: string; eventId: number }>;
  /** The history event being read (its run's events). */
  eventId: number;
  /** Whether a request's sender is proven under the run's key (an unproven one is never answered). */
  proven(from: unknown): Promise<boolean>;
}

/** A message this thread's workflow sent (its `control-request` to the recipient), or undefined. */
function sent(raw: unknown): TreeEventBody | undefined {
  const request = ControlRequest.safeParse(raw);
  if (!request.success || request.data.operation.type !== 'send-message') return undefined;
  const message = SendMessageRequest.safeParse(request.data.operation.request);
  if (!message.success) return undefined;
  return {
    type: 'message-sent',
    operationId: request.data.operationId,
    to: message.data.recipient,
    content: message.data.content,
  };
}

/**
 * The message events one history event of a thread's own workflow (an agent's, or the root run) holds:
 * a message it sent to another thread, and a message its mailbox took, once its receipt is in the
 * history (the update's completion, or the answer it sent to an agent's request). A request refused
 * has no receipt, so it is no event. `after` names the send a receipt must follow (SPEC S10.2).
 */
export async function mailboxEventsOf(
  client: ReadingClient,
  event: HistoryEvent,
  reading: MailboxReading,
): Promise<(TreeEventBody & { after?: string })[]> {
  const arg = (payloads: Parameters<typeof payloadArg>[1], index = 0) => payloadArg(client, payloads, index);
  const outgoing = event.signalExternalWorkflowExecutionInitiatedEventAttributes;
  if (outgoing?.signalName === 'control-request') {
    const message = sent(await arg(outgoing.input?.payloads));
    return message ? [message] : [];
  }
  if (outgoing?.signalName === 'control-response') {
    const response = ControlResponse.safeParse(await arg(outgoing.input?.payloads));
    if (!response.success) return [];
    const content = reading.pending.get(response.data.operationId)?.content;
    if (content === undefined) return [];
    reading.pending.delete(response.data.operationId);
    const receipt = Receipt.safeParse(response.data.result);
    if (!receipt.success) return [];
    const { id, sender, seq, sentAt } = receipt.data;
    return [
      {
        type: 'message-received',
        messageId: id,
        from: sender,
        seq,
        sentAt,
        content,
        after: `${sender}|${response.data.operationId}`,
      },
    ];
  }
  const signalled = event.workflowExecutionSignaledEventAttributes;
  if (signalled?.signalName === 'control-request') {
    const request = ControlRequest.safeParse(await arg(signalled.input?.payloads));
    if (
      request.success &&
      request.data.operation.type === 'send-message' &&
      (await reading.proven(request.data.from))
    ) {
      const message = SendMessageRequest.safeParse(request.data.operation.request);
      if (message.success)
        reading.pending.set(request.data.operationId, {
          content: message.data.content,
          eventId: reading.eventId,
        });
    }
    return [];
  }
  const accepted = event.workflowExecutionUpdateAcceptedEventAttributes;
  if (accepted?.acceptedRequest?.input?.name === 'send-message') {
    const message = SendMessageRequest.safeParse(await arg(accepted.acceptedRequest.input.args?.payloads, 1));
    const updateId = accepted.acceptedRequest.meta?.updateId;
    if (message.success && updateId)
      reading.pending.set(`update|${updateId}`, { content: message.data.content, eventId: reading.eventId });
    return [];
  }
  const completed = event.workflowExecutionUpdateCompletedEventAttributes;
  const updateId = completed?.meta?.updateId;
  if (completed && updateId && reading.pending.has(`update|${updateId}`)) {
    const content = reading.pending.get(`update|${updateId}`)!.content;
    reading.pending.delete(`update|${updateId}`);
    const receipt = Receipt.safeParse(await arg(completed.outcome?.success?.payloads));
    if (!receipt.success) return [];
    const { id, sender, seq, sentAt } = receipt.data;
    return [{ type: 'message-received', messageId: id, from: sender, seq, sentAt, content }];
  }
  return [];
}
