// `npm run bench`: one dev server, one in-process worker, every primitive and agents-kit operation
// measured in the same run, results written to bench/results/. Not part of `npm test`.
import { Client, Connection } from '@temporalio/client';
import { DefaultLogger, NativeConnection, Runtime } from '@temporalio/worker';
import { spawnSync } from 'node:child_process';
import { cpus, loadavg, totalmem } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { createActivities } from '../activities';
import { searchAttributeRegistrations } from '../domain/search-attributes';
import { devServerPragmas, devServerSettings, startDevServer, defaultDataDir } from '../workers/dev-server';
import { createAgentWorker } from '../workers/create-worker';
import {
  interruptBenchmark,
  publishRecvBenchmark,
  resolveBenchmark,
  sendMessageBenchmark,
  spawnBenchmark,
} from './agents-kit-ops';
import { measure, type BenchConfig, type OperationBenchmark, type OperationResult } from './measure';
import {
  childStartBenchmark,
  longPollBenchmark,
  relayBenchmark,
  signalBenchmark,
  updateBenchmark,
  type BenchContext,
} from './primitives';
import { compare, writeReport, type BenchReport } from './report';

const log = (line: string) => process.stderr.write(`[bench] ${line}\n`);

/** Counts from flags (`--iterations 50`), then environment (`BENCH_ITERATIONS=50`), then defaults. */
function readConfig(): BenchConfig & { stockServer: boolean } {
  const names = ['warmup', 'iterations', 'throughput-ops', 'concurrency', 'cost-ops', 'settle-ms'] as const;
  const { values } = parseArgs({
    options: {
      ...Object.fromEntries(names.map((name) => [name, { type: 'string' as const }])),
      'stock-server': { type: 'boolean' as const },
    },
    allowPositionals: false,
  });
  const strings = values as Partial<Record<(typeof names)[number], string>>;
  const read = (name: (typeof names)[number], fallback: number, min: number): number => {
    const raw = strings[name] ?? process.env[`BENCH_${name.toUpperCase().replace(/-/g, '_')}`];
    const value = raw === undefined ? fallback : Number(raw);
    if (!Number.isInteger(value) || value < min)
      throw new Error(`--${name} must be an integer ≥ ${min}, got ${raw}`);
    return value;
  };
  return {
    warmup: read('warmup', 5, 0),
    iterations: read('iterations', 40, 1),
    throughputOps: read('throughput-ops', 48, 1),
    concurrency: read('concurrency', 4, 1),
    costOps: read('cost-ops', 5, 1),
    settleMs: read('settle-ms', 30, 0),
    // The server's own transfer-queue read rate (20/s per shard) and an fsync per SQLite commit instead
    // of ours, to show their effect.
    stockServer: values['stock-server'] === true || process.env.BENCH_STOCK_SERVER === '1',
  };
}

async function main(): Promise<void> {
  const { stockServer, ...config } = readConfig();
  const serverSettings = {
    ...devServerSettings,
    ...(stockServer ? { 'history.transferProcessorMaxPollRPS': 20 } : {}),
  };
  const sqlitePragmas = stockServer ? ['journal_mode=WAL'] : [...devServerPragmas];
  Runtime.install({ logger: new DefaultLogger('WARN') });
  const startedAt = new Date().toISOString();
  const loadAverage = Math.round(loadavg()[0]! * 100) / 100;
  const runId = startedAt.replace(/[^0-9]/g, '').slice(0, 14);
  log(`config ${JSON.stringify(config)}`);
  const server = await startDevServer({
    dbFile: join(defaultDataDir(), `bench-${runId}`, 'temporal.sqlite'),
    headless: true,
    searchAttributes: searchAttributeRegistrations,
    dynamicConfig: serverSettings,
    sqlitePragmas,
  });
  log(
    `dev server on ${server.address} with ${JSON.stringify(serverSettings)}, SQLite ${sqlitePragmas.join(' ')}`,
  );
  const connection = await Connection.connect({ address: server.address });
  const nativeConnection = await NativeConnection.connect({ address: server.address });
  const client = new Client({ connection, namespace: server.namespace });
  const taskQueue = `bench-${runId}`;
  log('bundling agents-kit and bench workflows…');
  const worker = await createAgentWorker({
    connection: nativeConnection,
    namespace: server.namespace,
    taskQueue,
    activities: createActivities(),
    workflows: { workflowsPath: require.resolve('./workflows-index') },
  });
  const running = worker.run();
  const context: BenchContext = { client, taskQueue, runId, cleanup: [] };
  try {
    // Each agents-kit operation runs right after its primitive, so both see the same machine load.
    const order: OperationBenchmark[] = [
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
    ];
    const results: OperationResult[] = [];
    for (const benchmark of order) {
      const began = Date.now();
      const result = await measure(benchmark, config);
      results.push(result);
      log(
        `${result.name}: p50 ${result.latency.p50} ms, p95 ${result.latency.p95}, p99 ${result.latency.p99}, ` +
          `${result.throughputOpsPerSec} ops/s, ${result.cost.events} events, ${result.cost.actions} actions/op ` +
          `(${Math.round((Date.now() - began) / 1000)} s)`,
      );
    }
    const temporal = spawnSync(server.binary, ['--version'], { encoding: 'utf8' }).stdout.trim();
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
      sqlitePragmas,
      config,
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
  } finally {
    await Promise.race([
      Promise.allSettled(context.cleanup.map((stop) => stop())),
      new Promise((done) => setTimeout(done, 10_000)),
    ]);
    worker.shutdown();
    await running;
    await nativeConnection.close();
    await connection.close();
    await server.stop();
  }
}

main().catch((error: unknown) => {
  log(`failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`);
  process.exit(1);
});
