import type { WorkflowHandle } from '@temporalio/client';
import { setTimeout as delay } from 'node:timers/promises';
import { ThreadService } from '../client/thread-service';
import { relatedId } from '../domain/ids';
import { threadQuery } from '../domain/messages';
import { perOperation, type HistoryCost } from './actions';
import { awaitQuiet, awaitSettled, costSince, fetchEvents, historyLengths } from './histories';
import {
  type BenchConfig,
  type OperationBenchmark,
  type StepDetails,
  type StepSpans,
  type ThroughputWindow,
  type TimedOperation,
  nowMs,
} from './measure';
import { startTurnUpdate, stopSignal, turnsDoneQuery } from './messages';
import type { BenchContext } from './primitives';
import { summarizeLatencies } from './stats';
import type { ToolDefinition } from '../activities';
import { noopTool } from './step-model';
import { readTurn, type TurnReading } from './step-turns';
import { StepMode, type benchStepWorkflow } from './step-workflows';

/** Names of the step rows; a variant's rows carry its label, e.g. `agent step (eager)`. */
export const StepRow = {
  primitive: 'two-activity step',
  agent: 'agent step',
  local: 'two-local-activity step',
  localTool: 'activity + local-activity step',
} as const;

const labelled = (name: string, variant: string | undefined) => (variant ? `${name} (${variant})` : name);

/** One workflow whose turns a lane triggers, one turn at a time. */
interface StepLane {
  workflowId: string;
  trigger(): Promise<void>;
  /** Turns it has finished; throws when its last turn did not complete. */
  turnsDone(): Promise<number>;
}

/** What differs between the bare turn and the agent's: how lanes are made and what is watched. */
interface StepSubject {
  name: string;
  kind: OperationBenchmark['kind'];
  primitive?: string;
  description: string;
  costNote: string;
  lanes(count: number): Promise<StepLane[]>;
  /** The workflows whose histories a turn adds to (the lane's, and for an agent its root and conversations). */
  watched(lane: StepLane): string[];
  /** The root run's workflow id, when there is one (signals to it between steps are counted). */
  rootId?: string | undefined;
}

async function until<Value>(read: () => Promise<Value | undefined>, what: string): Promise<Value> {
  const deadline = Date.now() + 60_000;
  for (;;) {
    const value = await read();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    // Every poll is a query, an activation of the measured workflow on the measured worker: polling
    // every 10 ms spent ~15% of the workflow thread's time on queries. The sample is read from history,
    // so the period only decides when the next turn starts.
    await delay(50);
  }
}

/**
 * A step benchmark: a turn of `stepsPerTurn` steps is triggered, and its time divided by the steps is
 * the latency sample (the turn's own time goes into StepDetails). Completion is polled by query (no
 * history writes), then read from the history: the same clock as every other history-observed row.
 */
function stepBenchmark(
  context: BenchContext,
  subject: StepSubject,
  stepsPerTurn: number,
): OperationBenchmark {
  let lanes: StepLane[] = [];
  let config: BenchConfig;
  const turnMs: number[] = [];
  const readings: TurnReading[] = [];
  /** Runs one turn on `lane`; `completedMs` resolves once it is over (per-step time from `startMs`). */
  const runTurn = async (lane: StepLane): Promise<TimedOperation & { turn(): Promise<TurnReading> }> => {
    const before = (await fetchEvents(context.client, lane.workflowId)).length;
    const done = await lane.turnsDone();
    const startMs = nowMs();
    await lane.trigger();
    let reading: Promise<TurnReading> | undefined;
    const turn = () =>
      (reading ??= (async () => {
        await until(async () => ((await lane.turnsDone()) > done ? true : undefined), 'the turn to end');
        return until(
          async () =>
            readTurn(
              (await fetchEvents(context.client, lane.workflowId)).slice(before),
              stepsPerTurn,
              subject.rootId,
            ),
          `the turn's events in ${lane.workflowId}`,
        );
      })());
    return {
      startMs,
      turn,
      completedMs: async () => startMs + ((await turn()).endMs - startMs) / stepsPerTurn,
    };
  };
  return {
    name: subject.name,
    kind: subject.kind,
    ...(subject.primitive ? { primitive: subject.primitive } : {}),
    observedBy: 'history',
    description: subject.description,
    costNote: subject.costNote,
    async setup(given) {
      config = given;
      lanes = await subject.lanes(given.concurrency);
    },
    async operate(index) {
      const operation = await runTurn(lanes[0]!);
      const reading = await operation.turn();
      if (index >= config.warmup) turnMs.push(reading.endMs - operation.startMs);
      readings.push(reading);
      return operation;
    },
    // The turn's tail (for an agent: its turn-end reports and status) lands after its last step.
    settle: () => awaitSettled(context.client, subject.watched(lanes[0]!)),
    stepDetails(): StepDetails {
      const sum = (pick: (reading: TurnReading) => number) =>
        readings.reduce((total, reading) => total + pick(reading), 0);
      return {
        stepsPerTurn,
        turnLatency: summarizeLatencies(turnMs),
        turnsChecked: readings.length,
        rootSignalsBetweenSteps: sum((reading) => reading.rootSignals),
        signalsReceivedBetweenSteps: sum((reading) => reading.signalsReceived),
        workflowTasksPerTurn:
          Math.round((sum((reading) => reading.workflowTasks) / readings.length) * 10) / 10,
        spansPerStep: Object.fromEntries(
          (Object.keys(readings[0]!.spans) as (keyof StepSpans)[]).map((key) => [
            key,
            Math.round((sum((reading) => reading.spans[key]) / readings.length / stepsPerTurn) * 10) / 10,
          ]),
        ) as unknown as StepSpans,
      };
    },
    // `total` turns over every lane, each lane one turn at a time; throughput is in steps per second.
    async throughputWindows(total): Promise<ThroughputWindow[]> {
      let next = 0;
      const ends: number[] = [];
      const startMs = nowMs();
      await Promise.all(
        lanes.map(async (lane) => {
          while (next++ < total) ends.push((await (await runTurn(lane)).turn()).endMs);
        }),
      );
      return [{ operations: total * stepsPerTurn, startMs, endMs: Math.max(...ends) }];
    },
    async cost(operations): Promise<HistoryCost> {
      const watched = subject.watched(lanes[0]!);
      await awaitQuiet(context.client, watched);
      const before = await historyLengths(context.client, watched);
      for (let index = 0; index < operations; index++) await (await runTurn(lanes[0]!)).turn();
      await awaitQuiet(context.client, watched);
      return perOperation(await costSince(context.client, watched, before), operations * stepsPerTurn);
    },
  };
}

const modeDescriptions: Record<StepMode, { name: string; description: string; costNote: string }> = {
  [StepMode.activities]: {
    name: StepRow.primitive,
    description:
      'a bare workflow: an update starts a turn; per step a no-op "model" activity (20 tokens), then a no-op "tool" activity',
    costNote: 'per step: the two activities; the turn’s update shared by its steps',
  },
  [StepMode.local]: {
    name: StepRow.local,
    description: 'the bare turn with both calls as local activities (the least a step takes on Temporal)',
    costNote: 'per step: the markers of the tasks that ran its local activities; the update shared',
  },
  [StepMode.localTool]: {
    name: StepRow.localTool,
    description:
      'the bare turn with the model as an activity and the tool as a local activity (what fast tools could cost)',
    costNote: 'per step: the model activity and the tool’s marker; the update shared',
  },
};

/** The bare Temporal turn of `benchStepWorkflow` in one of its modes, one workflow per lane. */
export function bareStepBenchmark(
  context: BenchContext,
  mode: StepMode,
  stepsPerTurn: number,
  variant?: string,
): OperationBenchmark {
  const described = modeDescriptions[mode];
  return stepBenchmark(
    context,
    {
      ...described,
      name: labelled(described.name, variant),
      kind: 'primitive',
      async lanes(count) {
        return Promise.all(
          Array.from({ length: count }, async (_, index) => {
            const handle: WorkflowHandle<typeof benchStepWorkflow> = await context.client.workflow.start(
              'benchStepWorkflow',
              {
                taskQueue: context.taskQueue,
                workflowId: `bench-${context.runId}-step-${mode}${variant ? `-${variant}` : ''}-${index}`,
                args: [mode],
              },
            );
            context.cleanup.push(() => handle.signal(stopSignal));
            return {
              workflowId: handle.workflowId,
              trigger: async () =>
                void (await handle.executeUpdate(startTurnUpdate, { args: [stepsPerTurn] })),
              turnsDone: () => handle.query(turnsDoneQuery),
            };
          }),
        );
      },
      watched: (lane) => [lane.workflowId],
    },
    stepsPerTurn,
  );
}

/**
 * The agent's turn: a model-kernel thread (spawned under a root run of its own) whose provider is
 * bench/step-model.ts; a root sendMessage with triggerTurn starts each turn.
 */
export function agentStepBenchmark(
  context: BenchContext,
  stepsPerTurn: number,
  variant?: string,
  tool: ToolDefinition = noopTool,
): OperationBenchmark {
  // An agent whose tool runs as a local activity is compared with the bare step of the same shape.
  const primitive = tool.local ? StepRow.localTool : labelled(StepRow.primitive, variant);
  let service: ThreadService;
  const subject: StepSubject = {
    name: labelled(StepRow.agent, variant),
    kind: 'agents-kit',
    primitive,
    description:
      'a model-kernel agent: root sendMessage(triggerTurn) starts a turn; per step callModel (bench model, 20 tokens) then runTool (no-op tool)',
    costNote:
      'everything a turn causes on the agent, its conversation, the root and its conversation, divided by its steps',
    async lanes(count) {
      service = await ThreadService.attach(context.client, {
        taskQueue: context.taskQueue,
        owner: 'bench',
        root: {
          task: 'bench agent step',
          name: 'root',
          kernel: { type: 'scripted', turns: [[{ type: 'reply', text: 'done' }]] },
        },
        grant: {
          owner: 'bench',
          maxConcurrent: 100,
          maxTotal: 100,
          idleTimeoutMs: 3_600_000,
          budgetTokens: 100_000_000,
        },
      });
      subject.rootId = service.rootThreadId;
      const controls = service.rootControls();
      return Promise.all(
        Array.from({ length: count }, async (_, index): Promise<StepLane> => {
          const thread = await controls.spawn({
            task: 'bench step',
            name: `stepper${index}`,
            tools: [tool.name],
            kernel: { type: 'model', maxSteps: stepsPerTurn },
          });
          const handle = context.client.workflow.getHandle(thread.id);
          const lane: StepLane = {
            workflowId: thread.id,
            trigger: async () =>
              void (await controls.sendMessage({ recipient: thread.id, content: 'next', triggerTurn: true })),
            async turnsDone() {
              const state = await handle.query(threadQuery);
              if (state.latestTurn && state.latestTurn.status !== 'completed')
                throw new Error(
                  `turn ${state.latestTurn.turn} of ${thread.path}: ${JSON.stringify(state.latestTurn)}`,
                );
              return state.turnsCompleted;
            },
          };
          // Its first turn (the task) takes the first token allowance from the root; not measured.
          await until(async () => ((await lane.turnsDone()) >= 1 ? true : undefined), 'the first turn');
          return lane;
        }),
      );
    },
    watched: (lane) =>
      [service.rootThreadId, lane.workflowId].flatMap((id) => [id, relatedId('conversation', id)]),
  };
  return stepBenchmark(context, subject, stepsPerTurn);
}
