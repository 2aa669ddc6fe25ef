import {
  allHandlersFinished,
  condition,
  getExternalWorkflowHandle,
  ParentClosePolicy,
  setHandler,
  startChild,
} from '@temporalio/workflow';
import {
  echoUpdate,
  nextItemUpdate,
  pushSignal,
  relayUpdate,
  startBenchChildUpdate,
  stopSignal,
} from './messages';

// The bare Temporal primitives the benchmark compares agents-kit against. Each does the least its
// primitive needs: no timers, no search attribute upserts, no extra signals, so its history is the floor.

/**
 * Running as soon as its first workflow task completes, and then waits, as a spawned agent does (a
 * child that completed at once would add its completion to the parent's work).
 */
export async function benchChildWorkflow(): Promise<void> {
  let stopped = false;
  setHandler(stopSignal, () => void (stopped = true));
  await condition(() => stopped);
}

/** Starts bench children on request (child workflow start, the primitive under a spawn). */
export async function benchParentWorkflow(): Promise<void> {
  let stopped = false;
  setHandler(startBenchChildUpdate, async (workflowId) => {
    await startChild(benchChildWorkflow, { workflowId, parentClosePolicy: ParentClosePolicy.ABANDON });
    return workflowId;
  });
  setHandler(stopSignal, () => void (stopped = true));
  await condition(() => stopped && allHandlersFinished());
}

/** Serves the update round trip, the signal and the long-poll primitives. */
export async function benchTargetWorkflow(): Promise<void> {
  let stopped = false;
  const items: number[] = [];
  setHandler(echoUpdate, (value) => value);
  setHandler(pushSignal, (item) => void items.push(item));
  setHandler(nextItemUpdate, async (seen) => {
    await condition(() => items.length > seen || stopped);
    return items[seen] ?? -1;
  });
  setHandler(stopSignal, () => void (stopped = true));
  await condition(() => stopped && allHandlersFinished());
}

/**
 * Passes items on to bench targets, as a host passes an operation on to the workflow it is for: the
 * floor of an operation routed through a host (the root run, a conversation).
 */
export async function benchRelayWorkflow(): Promise<void> {
  let stopped = false;
  let sending = 0;
  setHandler(relayUpdate, (targetId, item) => {
    sending++;
    void getExternalWorkflowHandle(targetId)
      .signal(pushSignal, item)
      .finally(() => void sending--);
    return item;
  });
  setHandler(stopSignal, () => void (stopped = true));
  await condition(() => stopped && sending === 0 && allHandlersFinished());
}
