// `npm run bench:closing-retry`: messages to one thread from four senders while it keeps continuing as
// new (every 100 events), from a client whose Connection has the SDK's default gRPC retry and from one
// with agents-kit's (`grpcRetryInterceptor`). A message that reaches the thread as it continues as new
// is refused "workflow is closing" and taken by the next run; the default retry waits ~1.7 s for it,
// ours ~50 ms. Rounds alternate between the two clients; p50/p95/p99/max per client, written to
// bench/results/closing-retry-<time>.json. Not part of `npm test`.
import { Client, Connection, defaultGrpcRetryOptions, makeGrpcRetryInterceptor } from '@temporalio/client';
import { DefaultLogger, NativeConnection, Runtime } from '@temporalio/worker';
import { mkdirSync, writeFileSync } from 'node:fs';
import { cpus, loadavg } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { createActivities } from '../activities';
import { grpcRetryInterceptor } from '../client/grpc-retry';
import { ThreadService } from '../client/thread-service';
import { searchAttributeRegistrations } from '../domain/search-attributes';
import { createAgentWorker } from '../workers/create-worker';
import { defaultDataDir, devServerPragmas, devServerSettings, startDevServer } from '../workers/dev-server';
import { summarizeLatencies, type LatencySummary } from './stats';

const log = (line: string) => process.stderr.write(`[closing-retry] ${line}\n`);
const retries = {
  'SDK default retry': () => makeGrpcRetryInterceptor(defaultGrpcRetryOptions()),
  'agents-kit retry': () => grpcRetryInterceptor(),
} as const;
type Mode = keyof typeof retries;

/** One round: a fresh tree, `messages` sent to its one sub-agent by `senders` at once; ms per message. */
async function round(address: string, taskQueue: string, mode: Mode, messages: number, senders: number) {
  const connection = await Connection.connect({ address, interceptors: [retries[mode]()] });
  try {
    const client = new Client({ connection });
    const service = await ThreadService.attach(client, {
      taskQueue,
      owner: 'bench',
      root: {
        task: 'hold a busy thread',
        kernel: { type: 'scripted', turns: [[{ type: 'reply', text: 'r' }]] },
      },
      grant: { owner: 'bench', idleTimeoutMs: 600_000 },
      continueAsNewAfterEvents: 100,
    });
    const controls = service.rootControls();
    const idle = { type: 'scripted' as const, turns: [[{ type: 'reply' as const, text: 'ready' }]] };
    const thread = await controls.spawn({ name: 'busy', task: 'receive', kernel: idle });
    await controls.subscribeFirstTurn(thread.id);
    const latencies: number[] = [];
    let next = 0;
    await Promise.all(
      Array.from({ length: senders }, async () => {
        while (next < messages) {
          const index = next++;
          const started = performance.now();
          await controls.sendMessage({ recipient: thread.id, content: `m${index}` });
          latencies.push(performance.now() - started);
        }
      }),
    );
    let runs = 0;
    for await (const _ of client.workflow.list({ query: `WorkflowId = "${thread.id}"` })) runs++;
    await service.shutdown();
    return { latencies, runs };
  } finally {
    await connection.close();
  }
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      rounds: { type: 'string', default: '2' },
      messages: { type: 'string', default: '400' },
      senders: { type: 'string', default: '4' },
    },
  });
  const [rounds, messages, senders] = [values.rounds, values.messages, values.senders].map(Number) as [
    number,
    number,
    number,
  ];
  Runtime.install({ logger: new DefaultLogger('WARN') });
  const startedAt = new Date().toISOString();
  const server = await startDevServer({
    dbFile: join(defaultDataDir(), `bench-closing-${Date.now()}`, 'temporal.sqlite'),
    headless: true,
    searchAttributes: searchAttributeRegistrations,
    dynamicConfig: devServerSettings,
    sqlitePragmas: devServerPragmas,
  });
  const nativeConnection = await NativeConnection.connect({ address: server.address });
  const taskQueue = `closing-retry-${Date.now()}`;
  log(`dev server on ${server.address}; bundling the workflows…`);
  const worker = await createAgentWorker({
    connection: nativeConnection,
    taskQueue,
    activities: createActivities(),
  });
  const rows: Record<Mode, { latencies: number[]; runs: number[] }> = {
    'SDK default retry': { latencies: [], runs: [] },
    'agents-kit retry': { latencies: [], runs: [] },
  };
  try {
    await worker.runUntil(async () => {
      for (let index = 0; index < rounds; index++)
        for (const mode of Object.keys(retries) as Mode[]) {
          const measured = await round(server.address, taskQueue, mode, messages, senders);
          rows[mode].latencies.push(...measured.latencies);
          rows[mode].runs.push(measured.runs);
          const summary = summarizeLatencies(measured.latencies);
          log(
            `${mode}, round ${index + 1}: p99 ${summary.p99} ms, max ${summary.max} ms, ${measured.runs} runs`,
          );
        }
    });
  } finally {
    await nativeConnection.close();
    await server.stop();
  }
  const results = Object.entries(rows).map(([mode, row]) => ({
    mode,
    runsOfTheThread: row.runs,
    over500ms: row.latencies.filter((latency) => latency > 500).length,
    latency: summarizeLatencies(row.latencies) satisfies LatencySummary,
  }));
  console.log(`| client | messages | runs of the thread | p50 ms | p95 ms | p99 ms | max ms | over 500 ms |`);
  console.log(`| --- | ---: | --- | ---: | ---: | ---: | ---: | ---: |`);
  for (const { mode, runsOfTheThread, over500ms, latency } of results)
    console.log(
      `| ${mode} | ${latency.samples} | ${runsOfTheThread.join(', ')} | ${latency.p50} | ${latency.p95} | ${latency.p99} | ${latency.max} | ${over500ms} |`,
    );
  const directory = join(__dirname, 'results');
  mkdirSync(directory, { recursive: true });
  const path = join(directory, `closing-retry-${startedAt.replace(/[:.]/g, '-')}.json`);
  const machine = { cpus: cpus().length, loadAverage: loadavg()[0] };
  writeFileSync(
    path,
    `${JSON.stringify({ startedAt, rounds, messages, senders, machine, results }, null, 2)}\n`,
  );
  log(`wrote ${path}`);
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
