import type { ReadingClient } from './cancel';
import type { Payload } from '@temporalio/common';
import { decodeFromPayloadsAtIndex } from '@temporalio/common/lib/internal-non-workflow';
import { PublishRequest, SettleInteraction } from '../domain/conversation-schemas';
import { LiveChunk, type LiveOutput } from '../domain/live-output';
import type { HistoryEvent } from './history-tail';
import type { TreeEventBody } from './tree-stream';

/** Argument `index` of a history event's payloads, decoded by the client's converter (and codec). */
export const payloadArg = (
  client: ReadingClient,
  payloads: Payload[] | null | undefined,
  index = 0,
): Promise<unknown> =>
  decodeFromPayloadsAtIndex(client.options.loadedDataConverter, index, payloads ?? []).catch(() => undefined);

/** Whether a workflow of that id exists (any run). */
export const exists = (client: ReadingClient, workflowId: string) =>
  client.workflow
    .getHandle(workflowId)
    .describe()
    .then(
      () => true,
      () => false,
    );

/** What one history event of a thread's conversation says, as the conversation took it. */
export interface Reading {
  /** Whether `from` proves the conversation's own thread under the run's key. */
  proven(from: unknown): Promise<boolean>;
  seen: Set<string>;
  settled: Set<string>;
  live: LiveOutput;
  ended: boolean;
}

/** The tree events one history event of a thread's conversation holds, as the conversation took them. */
export async function conversationEventsOf(
  client: ReadingClient,
  event: HistoryEvent,
  reading: Reading,
): Promise<TreeEventBody[]> {
  const arg = (payloads: Payload[] | null | undefined, index = 0) => payloadArg(client, payloads, index);
  const published = async (raw: unknown): Promise<TreeEventBody[]> => {
    const request = PublishRequest.safeParse(raw);
    if (!request.success || reading.ended || !(await reading.proven(request.data.from))) return [];
    const taken: TreeEventBody[] = [];
    for (const notification of request.data.notifications) {
      if (reading.seen.has(notification.id)) continue;
      reading.seen.add(notification.id);
      taken.push({ type: 'notification', id: notification.id, body: notification.body });
      // The thread's end closes its conversation: nothing after it was taken.
      if (notification.body.type === 'status' && notification.body.event === 'thread-end') {
        reading.ended = true;
        break;
      }
    }
    return taken;
  };
  const started = event.workflowExecutionStartedEventAttributes;
  if (started) {
    const input = (await arg(started.input?.payloads)) as { first?: unknown; snapshot?: unknown } | undefined;
    return input?.first && !input.snapshot ? published(input.first) : [];
  }
  const signalled = event.workflowExecutionSignaledEventAttributes;
  if (signalled) {
    const raw = await arg(signalled.input?.payloads);
    if (signalled.signalName === 'publish') return published(raw);
    if (signalled.signalName === 'interaction-settled') {
      const settle = SettleInteraction.safeParse(raw);
      if (!settle.success || !(await reading.proven(settle.data.from))) return [];
      if (reading.settled.has(settle.data.resolution.requestId)) return [];
      reading.settled.add(settle.data.resolution.requestId);
      return [{ type: 'interaction-resolved', resolution: settle.data.resolution }];
    }
    if (signalled.signalName === 'live-output') {
      const chunk = LiveChunk.safeParse(raw);
      if (!chunk.success || !(await reading.proven(chunk.data.from))) return [];
      const before = reading.live.read('', { call: chunk.data.call, offset: 0, ended: false });
      const known = before.call ? before.length : 0;
      const length = reading.live.write(chunk.data);
      const fresh = chunk.data.text.slice(Math.max(0, known - chunk.data.offset));
      if (length <= known && !chunk.data.end) return [];
      return [
        {
          type: 'output',
          call: chunk.data.call,
          offset: known,
          text: fresh.slice(0, length - known),
          ...(chunk.data.end ? { end: chunk.data.end } : {}),
        },
      ];
    }
    return [];
  }
  const accepted = event.workflowExecutionUpdateAcceptedEventAttributes;
  if (accepted?.acceptedRequest?.input?.name === 'publish-with-receipt')
    return published(await arg(accepted.acceptedRequest.input.args?.payloads));
  if (accepted?.acceptedRequest?.input?.name === 'close-conversation') reading.ended = true;
  return [];
}
