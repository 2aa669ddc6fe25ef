import { defaultPayloadConverter, type Payload } from '@temporalio/common';
import type { Client, WorkflowHandle } from '@temporalio/client';
import { setTimeout as delay } from 'node:timers/promises';
import { eventTypeName, historyCost, type HistoryCost } from './actions';

/** One event of a workflow history, as the client returns it. */
export type HistoryEvent = NonNullable<Awaited<ReturnType<WorkflowHandle['fetchHistory']>>['events']>[number];

/**
 * The events of a workflow, oldest run first: its current run and the runs it continued from (an agent
 * continues-as-new when its history grows long, and an event looked for may be in an earlier run).
 * Empty when the workflow does not exist.
 */
export async function fetchEvents(client: Client, workflowId: string): Promise<HistoryEvent[]> {
  const runs: HistoryEvent[][] = [];
  let runId: string | undefined;
  do {
    const events = await fetchRun(client, workflowId, runId);
    runs.unshift(events);
    runId = events[0]?.workflowExecutionStartedEventAttributes?.continuedExecutionRunId || undefined;
  } while (runId);
  return runs.flat();
}

async function fetchRun(client: Client, workflowId: string, runId?: string): Promise<HistoryEvent[]> {
  try {
    return (await client.workflow.getHandle(workflowId, runId).fetchHistory()).events ?? [];
  } catch (error) {
    // A workflow that is not started yet has no history (the raw gRPC answer is NOT_FOUND, code 5).
    const notFound =
      error instanceof Error &&
      (error.name === 'WorkflowNotFoundError' || ('code' in error && error.code === 5));
    if (notFound) return [];
    throw error;
  }
}

/** An event's server time in epoch milliseconds (server and harness share this machine's clock). */
export function eventTimeMs(event: HistoryEvent): number {
  const seconds = Number(event.eventTime?.seconds?.toString() ?? 0);
  return seconds * 1000 + (event.eventTime?.nanos ?? 0) / 1e6;
}

/** When the workflow's first workflow task completed: its code ran and it is running (ms), if it has. */
export function firstTaskCompletedMs(events: readonly HistoryEvent[]): number | undefined {
  const done = events.find((event) => eventTypeName(event.eventType) === 'WorkflowTaskCompleted');
  return done ? eventTimeMs(done) : undefined;
}

/**
 * When a signal was handled: the completion time of the first workflow task after the signal named
 * `signalName` whose first argument satisfies `matches`, if there is one yet.
 */
export function signalHandledMs(
  events: readonly HistoryEvent[],
  signalName: string,
  matches: (argument: unknown) => boolean,
): number | undefined {
  const index = events.findIndex((event) => {
    const attributes = event.workflowExecutionSignaledEventAttributes;
    if (
      eventTypeName(event.eventType) !== 'WorkflowExecutionSignaled' ||
      attributes?.signalName !== signalName
    )
      return false;
    const payload = attributes.input?.payloads?.[0];
    return payload ? matches(defaultPayloadConverter.fromPayload(payload as Payload)) : false;
  });
  if (index < 0) return undefined;
  const done = events
    .slice(index + 1)
    .find((event) => eventTypeName(event.eventType) === 'WorkflowTaskCompleted');
  return done ? eventTimeMs(done) : undefined;
}

/** Polls a workflow's history until `read` finds a time in it (the event may still be on its way). */
export async function awaitHistoryTime(
  client: Client,
  workflowId: string,
  read: (events: HistoryEvent[]) => number | undefined,
  timeoutMs = 30_000,
): Promise<number> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const time = read(await fetchEvents(client, workflowId));
    if (time !== undefined) return time;
    if (Date.now() > deadline) throw new Error(`no matching event in the history of ${workflowId}`);
    await delay(50);
  }
}

/** History lengths of workflows (0 for one that does not exist yet). */
export async function historyLengths(
  client: Client,
  workflowIds: readonly string[],
): Promise<Map<string, number>> {
  const lengths = await Promise.all(workflowIds.map(async (id) => (await fetchEvents(client, id)).length));
  return new Map(workflowIds.map((id, index) => [id, lengths[index]!]));
}

/** Waits until the workflows' histories have stopped growing for `quietMs` (background work is done). */
export async function awaitQuiet(
  client: Client,
  workflowIds: readonly string[],
  quietMs = 800,
  timeoutMs = 30_000,
): Promise<void> {
  await untilUnchanged(
    async () => [...(await historyLengths(client, workflowIds)).values()].join(','),
    quietMs,
    timeoutMs,
    100,
  );
}

/** Events and actions the workflows recorded after the lengths in `before` (all of a new workflow's). */
export async function costSince(
  client: Client,
  workflowIds: readonly string[],
  before: ReadonlyMap<string, number>,
): Promise<HistoryCost> {
  const events: HistoryEvent[] = [];
  for (const id of new Set(workflowIds)) {
    events.push(...(await fetchEvents(client, id)).slice(before.get(id) ?? 0));
  }
  return historyCost(events.map((event) => ({ type: event.eventType })));
}

/**
 * Waits until the workflows are settled: no workflow task pending and no history event added for
 * `quietMs` (read from `describe`, so a long history costs nothing to poll). Latency samples settle
 * their tree between samples, so a sample is one operation, not one plus the tail of the last.
 */
export async function awaitSettled(
  client: Client,
  workflowIds: readonly string[],
  quietMs = 150,
  timeoutMs = 30_000,
): Promise<void> {
  const stateOf = async (id: string): Promise<string | undefined> => {
    try {
      const description = await client.workflow.getHandle(id).describe();
      if (description.raw.pendingWorkflowTask) return undefined;
      return `${description.runId}:${description.historyLength}`;
    } catch {
      return 'absent';
    }
  };
  await untilUnchanged(
    async () => {
      const states = await Promise.all(workflowIds.map(stateOf));
      return states.includes(undefined) ? undefined : states.join(',');
    },
    quietMs,
    timeoutMs,
    25,
  );
}

/**
 * Polls `read` every `pollMs` until it has answered the same state for `quietMs` (undefined: busy, never
 * settled), or `timeoutMs` has passed.
 */
async function untilUnchanged(
  read: () => Promise<string | undefined>,
  quietMs: number,
  timeoutMs: number,
  pollMs: number,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  let last: string | undefined;
  let stableSince = Date.now();
  while (Date.now() < deadline) {
    const state = await read();
    if (state === undefined || state !== last) {
      last = state;
      stableSince = Date.now();
    } else if (Date.now() - stableSince >= quietMs) return;
    await delay(pollMs);
  }
}
