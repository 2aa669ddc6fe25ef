// A cancel request aimed at the moment a run prepares to continue as new (patch `cancelWhileReleasing`):
// for test/workflows/cancel-while-releasing.test.ts and its golden histories (scripts/record-histories.ts).
import type { Client } from '@temporalio/client';
import { temporal as temporalProto } from '@temporalio/proto';

const { EventType } = temporalProto.api.enums.v1;

/** The run of `workflowId` now waiting out its pacing timer (started, not fired), if there is one. */
async function pacingRun(client: Client, workflowId: string): Promise<string | undefined> {
  const handle = client.workflow.getHandle(workflowId);
  const { runId, status } = await handle.describe();
  if (status.name !== 'RUNNING') return undefined;
  const events = (await client.workflow.getHandle(workflowId, runId).fetchHistory()).events ?? [];
  const pacing = events.filter((event) => {
    const timeout = event.timerStartedEventAttributes?.startToFireTimeout;
    return timeout && Number(timeout.seconds ?? 0) * 1000 + (timeout.nanos ?? 0) / 1e6 <= 1_100;
  });
  const fired = new Set(
    events
      .filter((event) => event.eventType === EventType.EVENT_TYPE_TIMER_FIRED)
      .map((event) => event.timerFiredEventAttributes?.timerId),
  );
  const waiting = pacing.some((event) => !fired.has(event.timerStartedEventAttributes?.timerId));
  return waiting ? runId : undefined;
}

/**
 * Keeps `workflowId` busy with `poke` (each run is due after ~100 events, so young runs come one after
 * another) until one of its runs waits out its pacing timer, and then runs `act` on that run; `act`
 * answers false when it did not reach that run (then a later one is tried). Returns the run acted on.
 */
export async function actWhilePacing(
  client: Client,
  workflowId: string,
  poke: (n: number) => Promise<unknown>,
  act: (runId: string) => Promise<boolean>,
): Promise<string> {
  let poking = true;
  let pokes = 0;
  const pokers = [0, 1, 2, 3].map(async () => {
    while (poking) await poke(pokes++).catch(() => undefined);
  });
  try {
    const deadline = Date.now() + 120_000;
    while (Date.now() < deadline) {
      const runId = await pacingRun(client, workflowId).catch(() => undefined);
      if (runId && (await act(runId))) return runId;
    }
    throw new Error(`no run of ${workflowId} was acted on while it waited out its pacing timer`);
  } finally {
    poking = false;
    await Promise.all(pokers);
  }
}

/** A cancel request sent to a run of `workflowId` while it waits out its pacing timer (above). */
export const cancelWhilePacing = (
  client: Client,
  workflowId: string,
  poke: (n: number) => Promise<unknown>,
) =>
  actWhilePacing(client, workflowId, poke, (runId) =>
    client.workflow
      .getHandle(workflowId, runId)
      .cancel()
      .then(
        () => true,
        () => false,
      ),
  );
