import type { HistoryCost } from './actions';
import { summarizeLatencies, throughput, withoutWarmup, type LatencySummary } from './stats';

/** How much to measure; every count can be set by environment variable or flag (see run.ts). */
export interface BenchConfig {
  /** Operations run and discarded before the latency samples. */
  warmup: number;
  /** Latency samples per operation (sequential, one at a time). */
  iterations: number;
  /** Operations of the sustained-throughput run. */
  throughputOps: number;
  /** Operations in flight at once during the throughput run. */
  concurrency: number;
  /** Operations whose histories are counted for the cost per operation. */
  costOps: number;
  /** How long a long-poll is given to be accepted before the publish that wakes it. */
  settleMs: number;
}

/**
 * One timed operation. `startMs` is taken just before the client call; `completedMs()` resolves to when
 * the operation was observed complete: by the client, or (for deliveries) in the recipient's history.
 * It is a function so history look-ups can wait until a throughput run is over (they would load it).
 */
export interface TimedOperation {
  startMs: number;
  completedMs(): Promise<number>;
}

/** A client-observed operation: complete when `call` resolves. */
export async function clientTimed(call: () => Promise<unknown>): Promise<TimedOperation> {
  const startMs = Date.now();
  await call();
  const endMs = Date.now();
  return { startMs, completedMs: async () => endMs };
}

/** What one benchmarked operation measured. */
export interface OperationResult {
  name: string;
  kind: 'primitive' | 'agents-kit';
  /** For an agents-kit operation: the primitive it is compared with. */
  primitive?: string;
  /**
   * For an agents-kit operation whose design routes it through a host workflow (SPEC S3.1, S5.4): the
   * primitive that is the least any such route takes; reported beside the target comparison.
   */
  floor?: string;
  /** Where completion is observed: `client` (the call returns) or `history` (the recipient's workflow task). */
  observedBy: 'client' | 'history';
  description: string;
  latency: LatencySummary;
  throughputOpsPerSec: number;
  cost: HistoryCost;
  costNote: string;
  /** For a step benchmark (latency is per step): its turns, as bench/agent-step.ts measured them. */
  step?: StepDetails;
}

/** What a step benchmark measured besides the per-step latency: whole turns and what ran between steps. */
export interface StepDetails {
  stepsPerTurn: number;
  /** Whole turns: from the trigger's client call to the task that took the turn's last model answer. */
  turnLatency: LatencySummary;
  /** Turns whose histories were read (every latency sample, warm-up included). */
  turnsChecked: number;
  /** Signals to the root sent between a turn's first model call and its last answer (a round trip starts so). */
  rootSignalsBetweenSteps: number;
  /** Signals the turn's workflow received in that window (a root's reply would be one). */
  signalsReceivedBetweenSteps: number;
  /** Workflow tasks of the turn's workflow per turn (trigger to the task after the last answer), mean. */
  workflowTasksPerTurn: number;
  /** Where a step's time went, from the turn's history, mean per step (spans may overlap). */
  spansPerStep: StepSpans;
}

/** Summed spans of a turn's workflow, in ms. */
export interface StepSpans {
  /** Activities scheduled → started (matching; near 0 when dispatched eagerly). */
  activityQueuedMs: number;
  /** Activities started → completed (the worker runs them, and reports back). */
  activityRunningMs: number;
  /** Workflow tasks scheduled → completed (queued, then run by the worker). */
  workflowTaskMs: number;
}

/** A benchmark of one operation: its timed operation, its throughput run and its cost run. */
export interface OperationBenchmark {
  name: string;
  kind: OperationResult['kind'];
  primitive?: string;
  floor?: string;
  observedBy: OperationResult['observedBy'];
  description: string;
  costNote: string;
  /** Prepares workflows; called once before anything is measured. */
  setup(config: BenchConfig): Promise<void>;
  /**
   * Starts operation `index` on lane `lane` (0 ≤ lane < concurrency) of a latency or throughput phase;
   * resolves once the client call returns.
   */
  operate(index: number, lane: number, phase: Phase): Promise<TimedOperation>;
  /** Runs `operations` operations and returns their cost per operation, counted from histories. */
  cost(operations: number): Promise<HistoryCost>;
  /** For a step benchmark: what it saw of its turns (called after the latency samples). */
  stepDetails?(): StepDetails;
  /** Throughput run, when the operation needs more than `operate` in loops (e.g. rounds). */
  throughputWindows?(total: number, concurrency: number): Promise<ThroughputWindow[]>;
}

/** Latency samples are taken one at a time; the throughput run keeps `concurrency` operations going. */
export type Phase = 'latency' | 'throughput';

/** A measured window of a throughput run. */
export interface ThroughputWindow {
  operations: number;
  startMs: number;
  endMs: number;
}

/** Runs `total` operations on `concurrency` lanes, each lane one operation at a time; one window. */
export async function laneWindow(
  total: number,
  concurrency: number,
  operate: (index: number, lane: number, phase: Phase) => Promise<TimedOperation>,
): Promise<ThroughputWindow> {
  let next = 0;
  const operations: TimedOperation[] = [];
  const startMs = Date.now();
  await Promise.all(
    Array.from({ length: Math.min(concurrency, total) }, async (_, lane) => {
      while (next < total) operations.push(await operate(next++, lane, 'throughput'));
    }),
  );
  const endMs = Math.max(...(await Promise.all(operations.map((operation) => operation.completedMs()))));
  return { operations: total, startMs, endMs };
}

/** Measures one operation: warm-up, sequential latency samples, throughput, cost. */
export async function measure(benchmark: OperationBenchmark, config: BenchConfig): Promise<OperationResult> {
  await benchmark.setup(config);
  const latencies: number[] = [];
  for (let index = 0; index < config.warmup + config.iterations; index++) {
    const operation = await benchmark.operate(index, 0, 'latency');
    latencies.push((await operation.completedMs()) - operation.startMs);
  }
  const step = benchmark.stepDetails?.();
  const base = config.warmup + config.iterations;
  const windows = benchmark.throughputWindows
    ? await benchmark.throughputWindows(config.throughputOps, config.concurrency)
    : [
        await laneWindow(config.throughputOps, config.concurrency, (index, lane, phase) =>
          benchmark.operate(base + index, lane, phase),
        ),
      ];
  return {
    name: benchmark.name,
    kind: benchmark.kind,
    ...(benchmark.primitive ? { primitive: benchmark.primitive } : {}),
    ...(benchmark.floor ? { floor: benchmark.floor } : {}),
    observedBy: benchmark.observedBy,
    description: benchmark.description,
    latency: summarizeLatencies(withoutWarmup(latencies, config.warmup)),
    throughputOpsPerSec: throughput(windows),
    cost: await benchmark.cost(config.costOps),
    costNote: benchmark.costNote,
    ...(step ? { step } : {}),
  };
}
