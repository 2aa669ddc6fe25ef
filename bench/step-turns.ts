import { eventTypeName } from './actions';
import { eventTimeMs, type HistoryEvent } from './histories';
import type { StepSpans } from './measure';

// Reading an agent's or a bare workflow's turn from its history (pure: no I/O).

/** A turn as its workflow's history shows it. */
export interface TurnReading {
  endMs: number;
  rootSignals: number;
  signalsReceived: number;
  workflowTasks: number;
  /** Where the turn's time went (ms, summed over its calls and tasks; they may overlap). */
  spans: StepSpans;
}

/**
 * Reads one turn from the events its workflow added since the trigger: its end (the task that took
 * the last model answer, or that ran the last local activity), and what came between its first and
 * last call. Undefined until the turn's `2 × steps − 1` calls and the task after them are there.
 */
export function readTurn(
  events: readonly HistoryEvent[],
  stepsPerTurn: number,
  rootId: string | undefined,
): TurnReading | undefined {
  let first = -1;
  let last = -1;
  let calls = 0;
  events.forEach((event, index) => {
    const name = eventTypeName(event.eventType);
    if (first < 0 && (name === 'ActivityTaskScheduled' || name === 'MarkerRecorded')) first = index;
    if (name === 'ActivityTaskCompleted' || name === 'MarkerRecorded') {
      calls++;
      last = index;
    }
  });
  if (calls < 2 * stepsPerTurn - 1) return undefined;
  if (calls > 2 * stepsPerTurn - 1)
    throw new Error(`a turn made ${calls} calls, not ${2 * stepsPerTurn - 1}: turns overlapped`);
  const isTaskDone = (event: HistoryEvent) => eventTypeName(event.eventType) === 'WorkflowTaskCompleted';
  // A local activity's marker is written by the task that ran it; an activity's result is taken by the next.
  const tasksDone = events.flatMap((event, index) => (isTaskDone(event) ? [index] : []));
  const end =
    eventTypeName(events[last]!.eventType) === 'MarkerRecorded'
      ? (tasksDone.filter((index) => index < last).at(-1) ?? -1)
      : (tasksDone.find((index) => index > last) ?? -1);
  if (end < 0) return undefined;
  const between = events.slice(first, last + 1);
  const turn = events.slice(0, end + 1);
  return {
    endMs: eventTimeMs(events[end]!),
    rootSignals: between.filter(
      (event) =>
        eventTypeName(event.eventType) === 'SignalExternalWorkflowExecutionInitiated' &&
        event.signalExternalWorkflowExecutionInitiatedEventAttributes?.workflowExecution?.workflowId ===
          rootId,
    ).length,
    signalsReceived: between.filter((event) => eventTypeName(event.eventType) === 'WorkflowExecutionSignaled')
      .length,
    workflowTasks: turn.filter(isTaskDone).length,
    spans: spansOf(turn),
  };
}

/** Sums of the spans of a turn's activities (queued, running) and workflow tasks (scheduled to done). */
function spansOf(events: readonly HistoryEvent[]): StepSpans {
  const times = new Map<string, number>();
  const spans: StepSpans = { activityQueuedMs: 0, activityRunningMs: 0, workflowTaskMs: 0 };
  const since = (scheduledEventId: unknown, event: HistoryEvent) => {
    const from = times.get(String(scheduledEventId));
    return from === undefined ? 0 : eventTimeMs(event) - from;
  };
  let taskScheduled: number | undefined;
  for (const event of events) {
    switch (eventTypeName(event.eventType)) {
      case 'ActivityTaskScheduled':
        times.set(String(event.eventId), eventTimeMs(event));
        break;
      case 'ActivityTaskStarted': {
        const scheduledEventId = event.activityTaskStartedEventAttributes?.scheduledEventId;
        spans.activityQueuedMs += since(scheduledEventId, event);
        times.set(`started-${String(scheduledEventId)}`, eventTimeMs(event));
        break;
      }
      case 'ActivityTaskCompleted':
        spans.activityRunningMs += since(
          `started-${String(event.activityTaskCompletedEventAttributes?.scheduledEventId)}`,
          event,
        );
        break;
      case 'WorkflowTaskScheduled':
        taskScheduled = eventTimeMs(event);
        break;
      case 'WorkflowTaskCompleted':
        if (taskScheduled !== undefined) spans.workflowTaskMs += eventTimeMs(event) - taskScheduled;
        taskScheduled = undefined;
        break;
    }
  }
  return spans;
}
