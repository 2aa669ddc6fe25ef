import { Client, Connection } from '@temporalio/client';
import { NativeConnection } from '@temporalio/worker';
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { createActivities } from '../activities';
import { grpcRetryInterceptor } from '../client/grpc-retry';
import { searchAttributeRegistrations } from '../domain/search-attributes';
import { createAgentWorker } from '../workers/create-worker';
import { defaultDataDir, startDevServer } from '../workers/dev-server';
import type { BenchContext } from './primitives';
import { localNoopTool, noopTool, stepActivities, stepModelProvider } from './step-model';

/** A dev server of the run with its in-process worker, ready for benchmarks. */
export interface BenchServer {
  context: BenchContext;
  /** `temporal --version` of the server binary. */
  temporal: string;
  /** Stops the run's workflows (10 s at most), the worker, the connections and the server. */
  close(): Promise<void>;
}

/**
 * Starts a dev server on a fresh SQLite file and a worker on it whose bundle holds every agents-kit
 * workflow and the bench primitives, and whose activities are agents-kit's (with the bench's step
 * model and no-op tool) plus the bare step's two.
 */
export async function openBench(options: {
  runId: string;
  serverSettings: Record<string, unknown>;
  sqlitePragmas: readonly string[];
  stepsPerTurn: number;
  log(line: string): void;
}): Promise<BenchServer> {
  const { runId, serverSettings, sqlitePragmas, log } = options;
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
  const closing: (() => Promise<void>)[] = [() => server.stop()];
  const close = async () => {
    for (const step of closing.reverse()) await step();
  };
  try {
    // The bench reads whole histories; an agent's page of events can pass gRPC's default 4 MB.
    const connection = await Connection.connect({
      address: server.address,
      channelArgs: { 'grpc.max_receive_message_length': 256 * 1024 * 1024 },
      interceptors: [grpcRetryInterceptor()],
    });
    closing.push(() => connection.close());
    const nativeConnection = await NativeConnection.connect({ address: server.address });
    closing.push(() => nativeConnection.close());
    const client = new Client({ connection, namespace: server.namespace });
    const taskQueue = `bench-${runId}`;
    log('bundling agents-kit and bench workflows…');
    const worker = await createAgentWorker({
      connection: nativeConnection,
      namespace: server.namespace,
      taskQueue,
      activities: {
        ...createActivities({
          model: stepModelProvider(options.stepsPerTurn),
          tools: [noopTool, localNoopTool],
        }),
        ...stepActivities,
      },
      workflows: { workflowsPath: require.resolve('./workflows-index') },
    });
    const running = worker.run();
    closing.push(async () => {
      worker.shutdown();
      await running;
    });
    const context: BenchContext = { client, taskQueue, runId, cleanup: [] };
    closing.push(async () => {
      await Promise.race([
        Promise.allSettled(context.cleanup.map((stop) => stop())),
        new Promise((done) => setTimeout(done, 10_000)),
      ]);
    });
    const temporal = spawnSync(server.binary, ['--version'], { encoding: 'utf8' }).stdout.trim();
    return { context, temporal, close };
  } catch (error) {
    await close();
    throw error;
  }
}
