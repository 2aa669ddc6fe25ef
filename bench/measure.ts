import { setTimeout as delay } from 'node:timers/promises';
import type { HistoryCost } from './actions';
import { seededRandom, summarizeLatencies, throughput, withoutWarmup, type LatencySummary } from './stats';

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
  /**
   * Pause after each latency sample (and its `settle`), so what a sample's call left running (a relayed
   * signal's delivery, a receiver's next poll) is not timed with the next row's sample.
   */
  gapMs: number;
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

/**
 * Epoch milliseconds with a fraction, from the monotonic clock: client-observed samples are ~20 ms, and
 * `Date.now()`'s whole milliseconds would round a ratio by up to 6%. History event times (the server's
 * clock, nanoseconds) are compared on the same scale.
 */
export const nowMs = (): number => performance.timeOrigin + performance.now();

/** A client-observed operation: complete when `call` resolves. */
export async function clientTimed(call: () => Promise<unknown>): Promise<TimedOperation> {
  const startMs = nowMs();
  await call();
  const endMs = nowMs();
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
  /**
   * After each latency sample: waits until the work the sample left behind (an agent's first turn, its
   * reports) is done, so the next sample meets a quiet tree. The throughput run does not settle.
   */
  settle?(): Promise<void>;
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
  const startMs = nowMs();
  await Promise.all(
    Array.from({ length: Math.min(concurrency, total) }, async (_, lane) => {
      while (next < total) operations.push(await operate(next++, lane, 'throughput'));
    }),
  );
  const endMs = Math.max(...(await Promise.all(operations.map((operation) => operation.completedMs()))));
  return { operations: total, startMs, endMs };
}

/**
 * Measures a group of operations. Latency samples go round by round over the group, one sample of each
 * row per round in an order shuffled each round, so load that changes while the group runs (a shared
 * machine) meets every row alike, no row always follows the same neighbour, and a ratio compares
 * samples taken side by side. Each sample settles and pauses before the next. Then each row's
 * throughput and cost, one row at a time.
 */
export async function measureGroup(
  benchmarks: readonly OperationBenchmark[],
  config: BenchConfig,
  measured: (result: OperationResult, seconds: number) => void,
): Promise<OperationResult[]> {
  for (const benchmark of benchmarks) await benchmark.setup(config);
  const latencies = benchmarks.map((): number[] => []);
  const began = Date.now();
  // Seeded, so a run's sample order can be reproduced.
  const random = seededRandom(benchmarks.length);
  for (let index = 0; index < config.warmup + config.iterations; index++) {
    for (const row of shuffled(benchmarks.length, random)) {
      const benchmark = benchmarks[row]!;
      const operation = await benchmark.operate(index, 0, 'latency');
      latencies[row]!.push((await operation.completedMs()) - operation.startMs);
      await benchmark.settle?.();
      await delay(config.gapMs);
    }
  }
  const latencySeconds = (Date.now() - began) / 1000 / benchmarks.length;
  const results: OperationResult[] = [];
  for (const [row, benchmark] of benchmarks.entries()) {
    const rowBegan = Date.now();
    const result = await throughputAndCost(benchmark, config, latencies[row]!);
    results.push(result);
    measured(result, Math.round(latencySeconds + (Date.now() - rowBegan) / 1000));
  }
  return results;
}

async function throughputAndCost(
  benchmark: OperationBenchmark,
  config: BenchConfig,
  latencies: number[],
): Promise<OperationResult> {
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

/** The numbers 0 … count − 1 in an order drawn from `random` (Fisher–Yates). */
function shuffled(count: number, random: () => number): number[] {
  const order = Array.from({ length: count }, (_, index) => index);
  for (let index = count - 1; index > 0; index--) {
    const other = Math.floor(random() * (index + 1));
    [order[index], order[other]] = [order[other]!, order[index]!];
  }
  return order;
}
