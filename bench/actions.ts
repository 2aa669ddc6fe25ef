/**
 * Temporal Cloud billable actions counted from workflow histories (pure). The rules are Temporal's
 * published ones, "Temporal Cloud Actions" (https://docs.temporal.io/cloud/actions, source
 * temporalio/documentation docs/evaluate/temporal-cloud/actions.mdx), restricted to what a history shows;
 * see BENCHMARKS.md for the list and what the history cannot show (queries, heartbeats, rejected updates).
 */

/** History event type names by their `temporal.api.enums.v1.EventType` number (stable wire values). */
const eventTypeNames: readonly string[] = [
  'Unspecified',
  'WorkflowExecutionStarted',
  'WorkflowExecutionCompleted',
  'WorkflowExecutionFailed',
  'WorkflowExecutionTimedOut',
  'WorkflowTaskScheduled',
  'WorkflowTaskStarted',
  'WorkflowTaskCompleted',
  'WorkflowTaskTimedOut',
  'WorkflowTaskFailed',
  'ActivityTaskScheduled',
  'ActivityTaskStarted',
  'ActivityTaskCompleted',
  'ActivityTaskFailed',
  'ActivityTaskTimedOut',
  'ActivityTaskCancelRequested',
  'ActivityTaskCanceled',
  'TimerStarted',
  'TimerFired',
  'TimerCanceled',
  'WorkflowExecutionCancelRequested',
  'WorkflowExecutionCanceled',
  'RequestCancelExternalWorkflowExecutionInitiated',
  'RequestCancelExternalWorkflowExecutionFailed',
  'ExternalWorkflowExecutionCancelRequested',
  'MarkerRecorded',
  'WorkflowExecutionSignaled',
  'WorkflowExecutionTerminated',
  'WorkflowExecutionContinuedAsNew',
  'StartChildWorkflowExecutionInitiated',
  'StartChildWorkflowExecutionFailed',
  'ChildWorkflowExecutionStarted',
  'ChildWorkflowExecutionCompleted',
  'ChildWorkflowExecutionFailed',
  'ChildWorkflowExecutionCanceled',
  'ChildWorkflowExecutionTimedOut',
  'ChildWorkflowExecutionTerminated',
  'SignalExternalWorkflowExecutionInitiated',
  'SignalExternalWorkflowExecutionFailed',
  'ExternalWorkflowExecutionSignaled',
  'UpsertWorkflowSearchAttributes',
  'WorkflowExecutionUpdateAccepted',
  'WorkflowExecutionUpdateRejected',
  'WorkflowExecutionUpdateCompleted',
  'WorkflowPropertiesModifiedExternally',
  'ActivityPropertiesModifiedExternally',
  'WorkflowPropertiesModified',
  'WorkflowExecutionUpdateAdmitted',
  'NexusOperationScheduled',
  'NexusOperationStarted',
  'NexusOperationCompleted',
  'NexusOperationFailed',
  'NexusOperationCanceled',
  'NexusOperationTimedOut',
  'NexusOperationCancelRequested',
  'WorkflowExecutionOptionsUpdated',
];

/** The name of a history event type number (`Unknown<n>` for numbers newer than this table). */
export function eventTypeName(type: number | null | undefined): string {
  return eventTypeNames[type ?? 0] ?? `Unknown${type}`;
}

/**
 * Event types that are billable actions, each with the published rule it comes from. Every other
 * event (workflow tasks, completions, the sender's side of a signal, the parent's record of a child's
 * start, update completion) is not an action.
 */
export const actionRules: Readonly<Record<string, string>> = {
  WorkflowExecutionStarted: 'Workflow started (client start, continue-as-new, child workflow execution)',
  StartChildWorkflowExecutionInitiated: 'Start Child Workflow (the second of a child start’s two actions)',
  TimerStarted: 'Timer started (including the implicit timer of condition(fn, timeout))',
  UpsertWorkflowSearchAttributes: 'Search Attribute upsert requested (one per command)',
  WorkflowExecutionSignaled: 'Signal sent (from a client or a workflow; counted where it is received)',
  WorkflowExecutionUpdateAccepted: 'Update received by Worker (successful; rejected ones leave no event)',
  ActivityTaskScheduled: 'Activity started (retries are not visible in history)',
  WorkflowExecutionOptionsUpdated: 'Workflow Execution Options updated',
  NexusOperationScheduled: 'Nexus Operation scheduled',
  NexusOperationCanceled: 'Nexus Operation canceled',
};

/** Local activities and side effects: all markers of one workflow task are one action. */
const markerRule = 'Local Activity / Side Effect (markers of one workflow task count once)';

/** Events and billable actions of a set of history events. */
export interface HistoryCost {
  events: number;
  actions: number;
  eventsByType: Record<string, number>;
  actionsByRule: Record<string, number>;
}

/**
 * Counts events and billable actions. `events` are in history order per workflow (markers are grouped
 * by the workflow task that recorded them), given as their type numbers.
 */
export function historyCost(events: readonly { type: number | null | undefined }[]): HistoryCost {
  const cost: HistoryCost = { events: 0, actions: 0, eventsByType: {}, actionsByRule: {} };
  let markerTask = -1;
  let task = 0;
  const add = (rule: string) => {
    cost.actions++;
    cost.actionsByRule[rule] = (cost.actionsByRule[rule] ?? 0) + 1;
  };
  for (const event of events) {
    const name = eventTypeName(event.type);
    cost.events++;
    cost.eventsByType[name] = (cost.eventsByType[name] ?? 0) + 1;
    if (name === 'WorkflowTaskCompleted') task++;
    const rule = actionRules[name];
    if (rule) add(rule);
    else if (name === 'MarkerRecorded' && markerTask !== task) {
      markerTask = task;
      add(markerRule);
    }
  }
  return cost;
}

/** A cost divided by the number of operations that caused it (rounded to 0.1). */
export function perOperation(cost: HistoryCost, operations: number): HistoryCost {
  const divide = (value: number) => Math.round((value / Math.max(1, operations)) * 10) / 10;
  const divideAll = (record: Record<string, number>) =>
    Object.fromEntries(Object.entries(record).map(([key, value]) => [key, divide(value)]));
  return {
    events: divide(cost.events),
    actions: divide(cost.actions),
    eventsByType: divideAll(cost.eventsByType),
    actionsByRule: divideAll(cost.actionsByRule),
  };
}

/** The sum of two costs (events, actions and their breakdowns). */
export function addCosts(left: HistoryCost, right: HistoryCost): HistoryCost {
  const merge = (first: Record<string, number>, second: Record<string, number>) => {
    const sum = { ...first };
    for (const [key, value] of Object.entries(second)) sum[key] = (sum[key] ?? 0) + value;
    return sum;
  };
  return {
    events: left.events + right.events,
    actions: left.actions + right.actions,
    eventsByType: merge(left.eventsByType, right.eventsByType),
    actionsByRule: merge(left.actionsByRule, right.actionsByRule),
  };
}
