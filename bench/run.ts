// `npm run bench`: one dev server, one in-process worker, every primitive and agents-kit operation
// measured in the same run, results written to bench/results/. Not part of `npm test`. The eager
// variant of the agent step needs other dynamic config, so it runs on a second server after the first.
// `--only agent-step` (comma-separated groups) runs part of it for a quick check.
import { DefaultLogger, Runtime } from '@temporalio/worker';
import { cpus, loadavg, totalmem } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { devServerPragmas, devServerSettings } from '../workers/dev-server';
import { agentStepBenchmark, bareStepBenchmark } from './agent-step';
import {
  interruptBenchmark,
  publishRecvBenchmark,
  resolveBenchmark,
  sendMessageBenchmark,
  spawnBenchmark,
} from './agents-kit-ops';
import { openBench } from './harness';
import { firstDeltaBenchmark } from './live-output';
import { measureGroup, type BenchConfig, type OperationBenchmark, type OperationResult } from './measure';
import {
  childStartBenchmark,
  longPollBenchmark,
  relayBenchmark,
  signalBenchmark,
  updateBenchmark,
  type BenchContext,
} from './primitives';
import { compare, writeReport, type BenchReport } from './report';
import { StepMode } from './step-workflows';
import { localNoopTool } from './step-model';
import { treeStreamBenchmark } from './tree-stream';

const log = (line: string) => process.stderr.write(`[bench] ${line}\n`);

/** The groups of rows `--only` can pick; each group runs on a dev server of its own settings. */
const groups = ['ops', 'agent-step', 'agent-step-eager'] as const;
type Group = (typeof groups)[number];

/** The dynamic config of the eager group: activities handed back in the workflow task's answer. */
const eagerSettings = { 'system.enableActivityEagerExecution': true } as const;

/** Counts from flags (`--iterations 50`), then environment (`BENCH_ITERATIONS=50`), then defaults. */
function readConfig(): { config: BenchConfig; stockServer: boolean; stepsPerTurn: number; only: Group[] } {
  const names = [
    'warmup',
    'iterations',
    'throughput-ops',
    'concurrency',
    'cost-ops',
    'settle-ms',
    'gap-ms',
    'steps-per-turn',
  ] as const;
  const { values } = parseArgs({
    options: {
      ...Object.fromEntries(names.map((name) => [name, { type: 'string' as const }])),
      'stock-server': { type: 'boolean' as const },
      only: { type: 'string' as const },
    },
    allowPositionals: false,
  });
  const strings = values as Partial<Record<(typeof names)[number] | 'only', string>>;
  const read = (name: (typeof names)[number], fallback: number, min: number): number => {
    const raw = strings[name] ?? process.env[`BENCH_${name.toUpperCase().replace(/-/g, '_')}`];
    const value = raw === undefined ? fallback : Number(raw);
    if (!Number.isInteger(value) || value < min)
      throw new Error(`--${name} must be an integer ≥ ${min}, got ${raw}`);
    return value;
  };
  const only = (strings.only ?? process.env.BENCH_ONLY ?? groups.join(',')).split(',').map((group) => {
    if (!(groups as readonly string[]).includes(group))
      throw new Error(`--only takes a comma-separated list of ${groups.join(', ')}; got ${group}`);
    return group as Group;
  });
  return {
    config: {
      warmup: read('warmup', 5, 0),
      iterations: read('iterations', 40, 1),
      throughputOps: read('throughput-ops', 48, 1),
      concurrency: read('concurrency', 4, 1),
      costOps: read('cost-ops', 5, 1),
      settleMs: read('settle-ms', 30, 0),
      gapMs: read('gap-ms', 100, 0),
    },
    // The server's own transfer-queue read rate (20/s per shard) and an fsync per SQLite commit instead
    // of ours, to show their effect.
    stockServer: values['stock-server'] === true || process.env.BENCH_STOCK_SERVER === '1',
    stepsPerTurn: read('steps-per-turn', 8, 2),
    only,
  };
}

/** The rows of a group; their latency samples are taken round by round, shuffled (measureGroup). */
function benchmarksOf(group: Group, context: BenchContext, stepsPerTurn: number): OperationBenchmark[] {
  switch (group) {
    case 'ops':
      return [
        childStartBenchmark(context),
        spawnBenchmark(context),
        signalBenchmark(context),
        relayBenchmark(context, 'delivery'),
        sendMessageBenchmark(context),
        resolveBenchmark(context),
        updateBenchmark(context),
        relayBenchmark(context, 'receipt'),
        interruptBenchmark(context),
        longPollBenchmark(context),
        publishRecvBenchmark(context),
        firstDeltaBenchmark(context),
        treeStreamBenchmark(context),
      ];
    case 'agent-step':
      return [
        bareStepBenchmark(context, StepMode.activities, stepsPerTurn),
        agentStepBenchmark(context, stepsPerTurn),
        bareStepBenchmark(context, StepMode.local, stepsPerTurn),
        bareStepBenchmark(context, StepMode.localTool, stepsPerTurn),
        agentStepBenchmark(context, stepsPerTurn, 'local tool', localNoopTool),
      ];
    case 'agent-step-eager':
      return [
        bareStepBenchmark(context, StepMode.activities, stepsPerTurn, 'eager'),
        agentStepBenchmark(context, stepsPerTurn, 'eager'),
      ];
  }
}

async function main(): Promise<void> {
  const { config, stockServer, stepsPerTurn, only } = readConfig();
  const serverSettings = {
    ...devServerSettings,
    ...(stockServer ? { 'history.transferProcessorMaxPollRPS': 20 } : {}),
  };
  const sqlitePragmas = stockServer ? ['journal_mode=WAL'] : [...devServerPragmas];
  Runtime.install({ logger: new DefaultLogger('WARN') });
  const startedAt = new Date().toISOString();
  const loadAverage = Math.round(loadavg()[0]! * 100) / 100;
  const runId = startedAt.replace(/[^0-9]/g, '').slice(0, 14);
  log(`config ${JSON.stringify({ ...config, stepsPerTurn, only })}`);
  const results: OperationResult[] = [];
  const variantSettings: Record<string, Record<string, unknown>> = {};
  let temporal = '';
  // The groups on the run's own settings share one server; the eager group gets a server of its own.
  const plans = [
    { groups: only.filter((group) => group !== 'agent-step-eager'), settings: serverSettings, label: 'main' },
    {
      groups: only.filter((group) => group === 'agent-step-eager'),
      settings: { ...serverSettings, ...eagerSettings },
      label: 'eager',
    },
  ].filter((plan) => plan.groups.length > 0);
  for (const plan of plans) {
    if (plan.label !== 'main') variantSettings[plan.label] = plan.settings;
    const bench = await openBench({
      runId: `${runId}-${plan.label}`,
      serverSettings: plan.settings,
      sqlitePragmas,
      stepsPerTurn,
      log,
    });
    temporal = bench.temporal;
    try {
      for (const group of plan.groups) {
        const rows = benchmarksOf(group, bench.context, stepsPerTurn);
        results.push(
          ...(await measureGroup(rows, config, (result, seconds) =>
            log(
              `${result.name}: p50 ${result.latency.p50} ms, p95 ${result.latency.p95}, p99 ${result.latency.p99}, ` +
                `${result.throughputOpsPerSec} ops/s, ${result.cost.events} events, ${result.cost.actions} actions/op` +
                (result.step
                  ? `; turn p50 ${result.step.turnLatency.p50} ms, ${result.step.rootSignalsBetweenSteps} root signals between steps`
                  : '') +
                ` (${seconds} s)`,
            ),
          )),
        );
      }
    } finally {
      await bench.close();
    }
  }
  const report: BenchReport = {
    startedAt,
    machine: {
      cpus: cpus().length,
      cpuModel: cpus()[0]?.model ?? 'unknown',
      memoryGiB: Math.round(totalmem() / 2 ** 30),
      node: process.version,
      platform: `${process.platform}-${process.arch}`,
      temporal,
      loadAverage,
    },
    serverSettings,
    ...(Object.keys(variantSettings).length > 0 ? { variantServerSettings: variantSettings } : {}),
    sqlitePragmas,
    config: { ...config, stepsPerTurn, only },
    results,
    comparisons: compare(results),
  };
  const written = writeReport(report, join(__dirname, 'results'));
  log(`wrote ${written}, bench/results/latest.md and latest.svg`);
  for (const comparison of report.comparisons) {
    log(
      `${comparison.operation} vs ${comparison.primitive}: p50 ${comparison.p50Ratio}×, throughput ${comparison.throughputRatio}×, +${comparison.extraActions} actions/op` +
        (comparison.floor
          ? `; vs ${comparison.floor.primitive}: p50 ${comparison.floor.p50Ratio}×, throughput ${comparison.floor.throughputRatio}×`
          : ''),
    );
  }
}

main().catch((error: unknown) => {
  log(`failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`);
  process.exit(1);
});
