// What a workflow task's completion carried, read from history: the worst-case answer tests use it.
import { temporal as proto } from '@temporalio/proto';
import type { Client } from '@temporalio/client';

export type HistoryEvent = proto.api.history.v1.IHistoryEvent;

/** A run's events, two per page: one of its events may take 1.6 MB, and a page must stay under gRPC's 4 MiB. */
export async function historyEvents(
  client: Client,
  workflowId: string,
  runId?: string,
): Promise<HistoryEvent[]> {
  const events: HistoryEvent[] = [];
  let nextPageToken: Uint8Array | undefined;
  do {
    const page = await client.workflowService.getWorkflowExecutionHistory({
      namespace: client.options.namespace,
      execution: { workflowId, ...(runId ? { runId } : {}) },
      maximumPageSize: 2,
      ...(nextPageToken ? { nextPageToken } : {}),
    });
    events.push(...(page.history?.events ?? []));
    nextPageToken = page.nextPageToken?.length ? page.nextPageToken : undefined;
  } while (nextPageToken);
  return events;
}

/**
 * The workflow task failures in a run: none, when every task could be answered. A task the server
 * failed because signals arrived while it ended the run (UnhandledCommand: it is retried with them, so
 * nothing is lost) is Temporal's way of delivering them, not a failure.
 */
export const failedTasks = (events: readonly HistoryEvent[]): string[] =>
  events
    .filter(
      (event) =>
        event.workflowTaskFailedEventAttributes &&
        event.workflowTaskFailedEventAttributes.cause !==
          proto.api.enums.v1.WorkflowTaskFailedCause.WORKFLOW_TASK_FAILED_CAUSE_UNHANDLED_COMMAND,
    )
    .map((event) => String(event.workflowTaskFailedEventAttributes?.failure?.message));

/**
 * The tasks the server failed because an event arrived while they ended the run (UnhandledCommand):
 * nothing is lost, but the worker replays the run from its start, refusing updates and signals meanwhile.
 */
export const endingRaces = (events: readonly HistoryEvent[]): string[] =>
  events
    .filter(
      (event) =>
        event.workflowTaskFailedEventAttributes?.cause ===
        proto.api.enums.v1.WorkflowTaskFailedCause.WORKFLOW_TASK_FAILED_CAUSE_UNHANDLED_COMMAND,
    )
    .map((event) => `event ${String(event.eventId)}: UnhandledCommand`);

const payloadBytes = (payload: proto.api.common.v1.IPayload | null | undefined): number =>
  (payload?.data?.length ?? 0) +
  Object.entries(payload?.metadata ?? {}).reduce((sum, [key, value]) => sum + key.length + value.length, 0);
const payloadsBytes = (payloads: proto.api.common.v1.IPayloads | null | undefined): number =>
  (payloads?.payloads ?? []).reduce((sum, payload) => sum + payloadBytes(payload), 0);

/** What one workflow task's completion carried, in bytes of payloads, by kind. */
export interface TaskAnswer {
  /** The WorkflowTaskCompleted event. */
  eventId: number;
  /** Accepted updates' arguments, which the completion sends back (sdk-core echoes each request). */
  echoes: number;
  /** Child workflow starts: input, summary and details. */
  starts: number;
  /** Update results. */
  updateAnswers: number;
  /** Signals to other workflows: the root's answers to its agents' requests among them. */
  signals: number;
  activities: number;
  total: number;
}

/**
 * Per workflow task, what its completion carried. Every event counted here is written by a task's
 * completion, in the batch right after its WorkflowTaskCompleted event: each belongs to the nearest
 * WorkflowTaskCompleted before it.
 */
export function taskAnswers(events: readonly HistoryEvent[]): TaskAnswer[] {
  const tasks: TaskAnswer[] = [];
  let task: TaskAnswer | undefined;
  for (const event of events) {
    if (event.workflowTaskCompletedEventAttributes) {
      task = {
        eventId: Number(event.eventId),
        echoes: 0,
        starts: 0,
        updateAnswers: 0,
        signals: 0,
        activities: 0,
        total: 0,
      };
      tasks.push(task);
    }
    if (!task) continue;
    const accepted = event.workflowExecutionUpdateAcceptedEventAttributes;
    if (accepted) task.echoes += payloadsBytes(accepted.acceptedRequest?.input?.args);
    const start = event.startChildWorkflowExecutionInitiatedEventAttributes;
    if (start)
      task.starts +=
        payloadsBytes(start.input) +
        payloadBytes(event.userMetadata?.summary) +
        payloadBytes(event.userMetadata?.details);
    const completed = event.workflowExecutionUpdateCompletedEventAttributes?.outcome;
    if (completed)
      task.updateAnswers +=
        payloadsBytes(completed.success) +
        (completed.failure ? proto.api.failure.v1.Failure.encode(completed.failure).finish().length : 0);
    const signal = event.signalExternalWorkflowExecutionInitiatedEventAttributes;
    if (signal) task.signals += payloadsBytes(signal.input);
    const activity = event.activityTaskScheduledEventAttributes;
    if (activity) task.activities += payloadsBytes(activity.input);
    task.total = task.echoes + task.starts + task.updateAnswers + task.signals + task.activities;
  }
  return tasks;
}

/** How many `control-request` signals (agents' requests to the root) a history holds. */
export const controlRequests = (events: readonly HistoryEvent[]) =>
  events.filter((event) => event.workflowExecutionSignaledEventAttributes?.signalName === 'control-request')
    .length;

export const Stage = proto.api.enums.v1.UpdateWorkflowExecutionLifecycleStage;

/**
 * The stage update `updateId` of workflow `workflowId` has reached, asked without waiting: ADMITTED while
 * the server holds it and no worker has seen it yet.
 */
export async function updateStage(client: Client, workflowId: string, updateId: string) {
  const response = await client.workflowService.pollWorkflowExecutionUpdate({
    namespace: client.options.namespace,
    updateRef: { workflowExecution: { workflowId }, updateId },
    identity: 'answer-worst-case test',
    waitPolicy: { lifecycleStage: Stage.UPDATE_WORKFLOW_EXECUTION_LIFECYCLE_STAGE_ADMITTED },
  });
  return response.stage;
}
