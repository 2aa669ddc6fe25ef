import { Worker } from '@temporalio/worker';
import type { Client } from '@temporalio/client';
import { temporal as temporalProto } from '@temporalio/proto';
import type { ConversationNotificationReceiver } from '../../client/conversation-receiver';
import type { ConversationNotification } from '../../domain/schemas';
import { eventually, untilClosed } from './runs';
import type { ThreadControls } from '../../client/thread-controls';
import { failedTasks } from './task-answers';
import { patchesOf } from './histories';
import { workflowBundlePath } from './temporal';

/**
 * How Temporal records a workflow's end, once it has one; asserts that none of its tasks failed, that it
 * took `patch` when given, and that its history replays as it ran.
 */
export async function closedAs(client: Client, workflowId: string, patch?: string): Promise<string> {
  const handle = client.workflow.getHandle(workflowId);
  const status = await untilClosed(client, workflowId).catch(async (error: unknown) => {
    // What it was doing, for a failure seen only in CI.
    const events = (await handle.fetchHistory()).events ?? [];
    const last = events
      .slice(-12)
      .map((event) =>
        String(temporalProto.api.enums.v1.EventType[event.eventType ?? 0]).replace('EVENT_TYPE_', ''),
      );
    throw new Error(
      `${String(error)}; failed tasks ${JSON.stringify(failedTasks(events))}; last events ${last.join(' ')}`,
    );
  });
  const history = await handle.fetchHistory();
  expect([workflowId, failedTasks(history.events ?? [])]).toEqual([workflowId, []]);
  if (patch) expect(patchesOf(history.events ?? [])).toContain(patch);
  await Worker.runReplayHistory({ workflowBundle: { codePath: workflowBundlePath() } }, history, workflowId);
  return status;
}

/** The thread's end as its conversation tells it (the last item, if the backlog ends without one). */
export async function threadEndOf(
  receiver: ConversationNotificationReceiver,
): Promise<ConversationNotification['body'] | undefined> {
  const seen: ConversationNotification[] = [];
  for (;;) {
    const item = await receiver.recv();
    if (!item) break;
    seen.push(item);
    if (item.body.type === 'status' && item.body.event === 'thread-end') break;
  }
  return seen.at(-1)?.body;
}

/** A thread closed as a close ends it: its root lists it cancelled, its conversation tells its end. */
export async function expectEndedCancelled(
  root: ThreadControls,
  threadId: string,
  receiver: ConversationNotificationReceiver,
): Promise<void> {
  const listed = await eventually(
    () => root.loadThread(threadId),
    (found) => found?.status === 'cancelled',
    'the root to list the agent as cancelled',
  );
  expect(listed?.status).toBe('cancelled');
  expect(await threadEndOf(receiver)).toMatchObject({
    type: 'status',
    event: 'thread-end',
    detail: 'cancelled',
  });
}
