import type { ReadingClient } from './cancel';
import type { temporal } from '@temporalio/proto';
import { withCancel } from './cancel';

export type HistoryEvent = temporal.api.history.v1.IHistoryEvent;

/** A point in a workflow's chain of runs: after event `eventId` of run `runId`. */
export interface HistoryPosition {
  runId: string;
  eventId: number;
}

/** Whether a gRPC failure is the call being cancelled (the tail's signal aborted). */
const cancelled = (error: unknown) =>
  (error as { code?: number } | undefined)?.code === 1 || /cancel/i.test(String(error));

/**
 * Every event of a workflow's chain of runs after `after` (from its first run's start by default), in
 * order, across continue-as-new; while the chain is open it long-polls for new events
 * (`waitNewEvent`, a read, not a billable action) until `signal` aborts. Ends when the chain's last
 * run has closed, or when no such workflow exists. The chain is the newest one under the id, unless
 * `firstRunId` names the first run of another (an id may be reused once its chain has ended).
 */
export async function* tailHistory(
  client: ReadingClient,
  workflowId: string,
  options: { after?: HistoryPosition; signal: AbortSignal; firstRunId?: () => Promise<string | undefined> },
): AsyncGenerator<{ runId: string; event: HistoryEvent }> {
  let runId = options.after?.runId ?? (await options.firstRunId?.());
  if (!runId) {
    const description = await client.workflow
      .getHandle(workflowId)
      .describe()
      .catch(() => undefined);
    if (!description) return;
    runId = description.raw.workflowExecutionInfo?.firstRunId || description.runId;
  }
  let after = options.after?.eventId ?? 0;
  while (!options.signal.aborted) {
    let token: Uint8Array | undefined;
    let next: string | undefined;
    let closed = false;
    const run: string = runId;
    for (;;) {
      const page = await withCancel(client, options.signal, () =>
        client.workflowService.getWorkflowExecutionHistory({
          namespace: client.options.namespace,
          execution: { workflowId, runId: run },
          waitNewEvent: true,
          ...(token ? { nextPageToken: token } : {}),
        }),
      ).catch((error: unknown) => {
        if (options.signal.aborted || cancelled(error)) return undefined;
        throw error;
      });
      if (!page) return;
      for (const event of page.history?.events ?? []) {
        const eventId = Number(event.eventId);
        if (eventId <= after) continue;
        after = eventId;
        const continued = event.workflowExecutionContinuedAsNewEventAttributes?.newExecutionRunId;
        if (continued) next = continued;
        if (
          event.workflowExecutionCompletedEventAttributes ||
          event.workflowExecutionFailedEventAttributes ||
          event.workflowExecutionTerminatedEventAttributes ||
          event.workflowExecutionCanceledEventAttributes ||
          event.workflowExecutionTimedOutEventAttributes ||
          continued
        )
          closed = true;
        yield { runId: run, event };
      }
      if (page.nextPageToken && page.nextPageToken.length > 0) token = page.nextPageToken;
      else if (closed) break;
      else {
        // An open run always answers with a token to wait on; without one, read it again shortly.
        token = undefined;
        await new Promise((done) => setTimeout(done, 200));
      }
      if (options.signal.aborted) return;
    }
    if (!next) return;
    runId = next;
    after = 0;
  }
}
