import type { Client, WorkflowHandle } from '@temporalio/client';
import { setTimeout as delay } from 'node:timers/promises';
import { perOperation, type HistoryCost } from './actions';
import {
  awaitHistoryTime,
  awaitQuiet,
  costSince,
  firstTaskCompletedMs,
  historyLengths,
  signalHandledMs,
} from './histories';
import {
  clientTimed,
  type BenchConfig,
  type OperationBenchmark,
  type TimedOperation,
  nowMs,
} from './measure';
import {
  echoUpdate,
  nextItemUpdate,
  pushSignal,
  relayUpdate,
  startBenchChildUpdate,
  stopSignal,
} from './messages';
import type { benchParentWorkflow, benchRelayWorkflow, benchTargetWorkflow } from './workflows';

/** Names of the primitives, as the agents-kit operations refer to them. */
export const Primitive = {
  childStart: 'child workflow start → running',
  signal: 'signal → handler',
  update: 'update round trip',
  longPoll: 'long-poll update wake-up',
  /** The floor of a host-routed delivery: an update to a relay, which signals the recipient. */
  relayedSignal: 'relayed signal → handler',
  /** The floor of a host-routed command's answer: the relay's update round trip (its signal goes on). */
  relayUpdate: 'relaying update round trip',
} as const;
export type Primitive = (typeof Primitive)[keyof typeof Primitive];

/** Where the bench runs: a client, the worker's task queue, and a prefix for this run's workflow ids. */
export interface BenchContext {
  client: Client;
  taskQueue: string;
  runId: string;
  /** Workflows to stop when the run is over. */
  cleanup: (() => Promise<void>)[];
}

/** Every bench workflow takes no arguments and runs until its stop signal. */
type BenchWorkflow = typeof benchTargetWorkflow;

/** Starts a bench workflow of this run, stopped (by signal) when the run is over. */
async function startBenchWorkflow(
  context: BenchContext,
  type: string,
  label: string,
): Promise<WorkflowHandle<BenchWorkflow>> {
  const handle = await context.client.workflow.start<BenchWorkflow>(type, {
    taskQueue: context.taskQueue,
    workflowId: `bench-${context.runId}-${label}`,
  });
  context.cleanup.push(() => handle.signal(stopSignal));
  return handle;
}

const startTarget = (context: BenchContext, label: string) =>
  startBenchWorkflow(context, 'benchTargetWorkflow', label);

/** Costs `operations` runs of `operate` on quiet workflows: deltas of `watched` plus any workflows it adds. */
export async function costOf(
  client: Client,
  watched: readonly string[],
  operations: number,
  operate: (index: number) => Promise<string[]>,
): Promise<HistoryCost> {
  await awaitQuiet(client, watched);
  const before = await historyLengths(client, watched);
  const added: string[] = [];
  for (let index = 0; index < operations; index++) added.push(...(await operate(index)));
  const all = [...watched, ...added];
  await awaitQuiet(client, all);
  return perOperation(await costSince(client, all, before), operations);
}

/** Child workflow start → running: an update asks a parent to start a child; done when the child's first task completes. */
export function childStartBenchmark(context: BenchContext): OperationBenchmark {
  let parent: WorkflowHandle<typeof benchParentWorkflow>;
  let count = 0;
  const startOne = async (): Promise<TimedOperation & { childId: string }> => {
    const childId = `bench-${context.runId}-child-${count++}`;
    const startMs = nowMs();
    await parent.executeUpdate(startBenchChildUpdate, { args: [childId] });
    const completedMs = () => awaitHistoryTime(context.client, childId, firstTaskCompletedMs);
    return { startMs, completedMs, childId };
  };
  return {
    name: Primitive.childStart,
    kind: 'primitive',
    observedBy: 'history',
    description:
      'client update to a parent that starts a child; until the child’s first workflow task completes',
    costNote:
      'parent: update + child start; child: its start and first task (it then waits, as an agent does)',
    async setup() {
      parent = await startBenchWorkflow(context, 'benchParentWorkflow', 'parent');
    },
    operate: () => startOne(),
    cost: (operations) =>
      costOf(context.client, [parent.workflowId], operations, async () => [(await startOne()).childId]),
  };
}

/** Signal → handler: a client signal; done when the target's workflow task that ran the handler completes. */
export function signalBenchmark(context: BenchContext): OperationBenchmark {
  let target: WorkflowHandle<typeof benchTargetWorkflow>;
  let count = 0;
  const sendOne = async (): Promise<TimedOperation> => {
    const item = count++;
    const startMs = nowMs();
    await target.signal(pushSignal, item);
    return {
      startMs,
      completedMs: () =>
        awaitHistoryTime(context.client, target.workflowId, (events) =>
          signalHandledMs(events, pushSignal.name, (argument) => argument === item),
        ),
    };
  };
  return {
    name: Primitive.signal,
    kind: 'primitive',
    observedBy: 'history',
    description: 'client signal; until the workflow task that ran its handler completes (history time)',
    costNote: 'one signal and the workflow task that handles it',
    async setup() {
      target = await startTarget(context, 'signal-target');
    },
    operate: () => sendOne(),
    cost: (operations) =>
      costOf(context.client, [target.workflowId], operations, async () => (await sendOne(), [])),
  };
}

/**
 * A host's hop: a client update to one relay workflow, whose handler signals a target and answers at
 * once. Observed at the target (`delivery`: until the target's task that ran the signal's handler
 * completes) or at the client (`receipt`: until the update answers). Every lane shares the one relay,
 * as every control operation of a run shares its root.
 */
export function relayBenchmark(context: BenchContext, observed: 'delivery' | 'receipt'): OperationBenchmark {
  let relay: WorkflowHandle<typeof benchRelayWorkflow>;
  let target: WorkflowHandle<typeof benchTargetWorkflow>;
  let count = 0;
  const relayOne = async (): Promise<TimedOperation> => {
    const item = count++;
    const startMs = nowMs();
    await relay.executeUpdate(relayUpdate, { args: [target.workflowId, item] });
    const endMs = nowMs();
    return {
      startMs,
      completedMs: async () =>
        observed === 'receipt'
          ? endMs
          : awaitHistoryTime(context.client, target.workflowId, (events) =>
              signalHandledMs(events, pushSignal.name, (argument) => argument === item),
            ),
    };
  };
  return {
    name: observed === 'delivery' ? Primitive.relayedSignal : Primitive.relayUpdate,
    kind: 'primitive',
    observedBy: observed === 'delivery' ? 'history' : 'client',
    description:
      observed === 'delivery'
        ? 'client update to a relay that signals the target and answers; until the target’s task that ran the handler completes'
        : 'client update to a relay that signals a target and answers at once; until the update answers',
    costNote: 'relay: one update and the signal it sends; target: the signal and the task that handles it',
    async setup() {
      relay = await startBenchWorkflow(context, 'benchRelayWorkflow', `relay-${observed}`);
      target = await startTarget(context, `relay-${observed}-target`);
    },
    operate: () => relayOne(),
    cost: (operations) =>
      costOf(context.client, [relay.workflowId, target.workflowId], operations, async () => {
        await (await relayOne()).completedMs();
        return [];
      }),
  };
}

/** Update round trip: an update whose handler answers at once. */
export function updateBenchmark(context: BenchContext): OperationBenchmark {
  let target: WorkflowHandle<typeof benchTargetWorkflow>;
  const echo = (index: number) => clientTimed(() => target.executeUpdate(echoUpdate, { args: [index] }));
  return {
    name: Primitive.update,
    kind: 'primitive',
    observedBy: 'client',
    description: 'executeUpdate on a handler that returns its argument',
    costNote: 'one update (accepted + completed in one workflow task)',
    async setup() {
      target = await startTarget(context, 'update-target');
    },
    operate: (index) => echo(index),
    cost: (operations) =>
      costOf(context.client, [target.workflowId], operations, async (index) => (await echo(index), [])),
  };
}

/** Long-poll wake-up: an update waits for the next item; a signal pushes it; done when the update answers. */
export function longPollBenchmark(context: BenchContext): OperationBenchmark {
  const lanes: { target: WorkflowHandle<typeof benchTargetWorkflow>; seen: number }[] = [];
  let settleMs = 0;
  const wake = async (index: number, lane: number, settle: boolean): Promise<TimedOperation> => {
    const state = lanes[lane]!;
    const poll = state.target.executeUpdate(nextItemUpdate, { args: [state.seen++] });
    if (settle) await delay(settleMs);
    return clientTimed(async () => {
      await state.target.signal(pushSignal, index);
      await poll;
    });
  };
  return {
    name: Primitive.longPoll,
    kind: 'primitive',
    observedBy: 'client',
    description:
      'a waiting update (given settleMs to be accepted) woken by a client signal; until it answers',
    costNote: 'one update (accepted, completed later) + one signal',
    async setup(config: BenchConfig) {
      settleMs = config.settleMs;
      for (let lane = 0; lane < config.concurrency; lane++) {
        lanes.push({ target: await startTarget(context, `long-poll-${lane}`), seen: 0 });
      }
    },
    operate: (index, lane, phase) => wake(index, lane, phase === 'latency'),
    cost: (operations) =>
      costOf(context.client, [lanes[0]!.target.workflowId], operations, async (index) => {
        await (await wake(index, 0, true)).completedMs();
        return [];
      }),
  };
}
