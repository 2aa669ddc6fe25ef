import type { Client, WorkflowHandle } from '@temporalio/client';
import { temporal } from '@temporalio/proto';
import { ErrorKind, KitError } from '../../domain/errors';

/** How long `run` gives a worker to take the root's first task before asking whether any polls. */
export const firstTaskGraceMs = 5_000;

const scheduled = temporal.api.enums.v1.PendingWorkflowTaskState.PENDING_WORKFLOW_TASK_STATE_SCHEDULED;

/**
 * Waits until a worker has taken the root run's first workflow task. One that nobody has taken after
 * `graceMs`, on a task queue no worker polls (a typo, or no worker started), would wait for good and
 * the command with it: the run is terminated (nobody else holds its capability) and the error says
 * why. A queue some worker polls is only busy: the command goes on.
 */
export async function untilRootTaken(
  client: Client,
  handle: WorkflowHandle,
  taskQueue: string,
  graceMs = firstTaskGraceMs,
): Promise<void> {
  const deadline = Date.now() + graceMs;
  for (;;) {
    const { raw } = await handle.describe();
    if (
      raw.pendingWorkflowTask?.state !== scheduled ||
      Number(raw.workflowExecutionInfo?.historyLength ?? 0) > 2
    )
      return;
    if (Date.now() >= deadline) {
      if ((await pollersOf(client, taskQueue)) !== 0) return;
      await handle.terminate(`no worker polls task queue ${taskQueue}`).catch(() => undefined);
      throw new KitError(
        ErrorKind.Integration,
        `no worker polls task queue ${taskQueue} (none took the root's first task in ${graceMs / 1000} s): start one on it (agents-kit worker, AGENTS_KIT_TASK_QUEUE=${taskQueue}) or pass the queue yours polls (--task-queue); the run was terminated`,
        { taskQueue, rootThreadId: handle.workflowId },
      );
    }
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
}

/** How many pollers the server saw lately on the queue; undefined when it will not say (its rights). */
function pollersOf(client: Client, taskQueue: string): Promise<number | undefined> {
  return client.workflowService
    .describeTaskQueue({
      namespace: client.options.namespace,
      taskQueue: { name: taskQueue, kind: temporal.api.enums.v1.TaskQueueKind.TASK_QUEUE_KIND_NORMAL },
      taskQueueType: temporal.api.enums.v1.TaskQueueType.TASK_QUEUE_TYPE_WORKFLOW,
    })
    .then(
      ({ pollers }) => pollers?.length ?? 0,
      () => undefined,
    );
}
