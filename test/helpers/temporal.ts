import { Client } from '@temporalio/client';
import { connectTest } from './connection';
import {
  bundleWorkflowCode,
  DefaultLogger,
  NativeConnection,
  Runtime,
  type Worker,
} from '@temporalio/worker';
import { randomUUID } from 'node:crypto';
import { createActivities } from '../../activities';
import { bundleOptions, createAgentWorker } from '../../workers/create-worker';
import { quietLogger } from './quiet-logger';

/** A connection to the run's shared dev server, plus workers on per-test task queues, all closed by close(). */
export interface TestTemporal {
  client: Client;
  nativeConnection: NativeConnection;
  address: string;
  startWorker(options: { taskQueue: string; activities?: object }): Promise<Worker>;
  close(): Promise<void>;
}

export function testServerAddress(): string {
  const address = process.env.AGENTS_KIT_TEST_ADDRESS;
  if (!address)
    throw new Error(
      'AGENTS_KIT_TEST_ADDRESS is not set: run the tests through jest (globalSetup starts the server)',
    );
  return address;
}

export function workflowBundlePath(): string {
  const path = process.env.AGENTS_KIT_TEST_BUNDLE;
  if (!path) throw new Error('AGENTS_KIT_TEST_BUNDLE is not set: run the tests through jest');
  return path;
}

/**
 * The library's workflow bundle with one more workflow interceptor module from test/deploy (`name`,
 * without extension): the code of another build, for the deploy tests.
 */
export async function bundleWith(name: string): Promise<string> {
  const { code } = await bundleWorkflowCode({
    ...bundleOptions,
    workflowInterceptorModules: [
      ...bundleOptions.workflowInterceptorModules,
      require.resolve(`../deploy/${name}`),
    ],
    logger: quietLogger,
  });
  return code;
}

/** A task queue no other test uses. */
export const uniqueTaskQueue = (label: string): string => `${label}-${randomUUID().slice(0, 8)}`;

export async function connectTestTemporal(): Promise<TestTemporal> {
  try {
    // Worker lifecycle INFO lines drown test output; warnings and errors still show.
    Runtime.install({ logger: new DefaultLogger('WARN') });
  } catch {
    // Installed already in this process.
  }
  const address = testServerAddress();
  const connection = await connectTest({ address });
  const nativeConnection = await NativeConnection.connect({ address });
  const client = new Client({ connection });
  const running: { worker: Worker; done: Promise<void> }[] = [];
  return {
    client,
    nativeConnection,
    address,
    async startWorker({ taskQueue, activities }) {
      const worker = await createAgentWorker({
        connection: nativeConnection,
        taskQueue,
        activities: activities ?? createActivities(),
        workflows: { workflowBundle: { codePath: workflowBundlePath() } },
        // A suite's end cancels what is still running (a tool a test left blocked) instead of waiting for it.
        shutdownGraceMs: 0,
      });
      running.push({ worker, done: worker.run() });
      return worker;
    },
    async close() {
      for (const { worker } of running) if (worker.getState() === 'RUNNING') worker.shutdown();
      await Promise.allSettled(running.map(({ done }) => done));
      await nativeConnection.close();
      await connection.close();
    },
  };
}

/**
 * A suite's connection to the test server without a worker of its own, made before its tests and closed
 * after.
 */
export function suiteTemporal(): () => TestTemporal {
  let temporal: TestTemporal | undefined;
  beforeAll(async () => {
    temporal = await connectTestTemporal();
  });
  afterAll(async () => temporal?.close());
  return () => temporal!;
}

/**
 * A suite's connection and worker on its own task queue (`label`), made before its tests and closed
 * after them; the workflows its tests push to `started` are terminated first. `connected` receives the
 * connection once it is made.
 */
export function suiteWorker(
  label: string,
  connected: (temporal: TestTemporal) => void,
): { taskQueue: string; started: string[] } {
  const taskQueue = uniqueTaskQueue(label);
  const started: string[] = [];
  let temporal: TestTemporal | undefined;
  beforeAll(async () => {
    temporal = await connectTestTemporal();
    connected(temporal);
    await temporal.startWorker({ taskQueue });
  });
  afterAll(async () => {
    await Promise.allSettled(
      started.map((id) => temporal!.client.workflow.getHandle(id).terminate('test done')),
    );
    await temporal?.close();
  });
  return { taskQueue, started };
}
