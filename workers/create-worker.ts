import { NativeConnection, Worker, type WorkerOptions } from '@temporalio/worker';

/** Where workflow code comes from: the source folder (bundled at start) or a prebuilt bundle. */
export type WorkflowSource =
  { workflowsPath: string } | { workflowBundle: { codePath: string } | { code: string } };

export const workflowsPath = require.resolve('../workflows');

/** An agents-kit worker on one task queue: every workflow type, and the activities given. */
export async function createAgentWorker(options: {
  connection: NativeConnection;
  namespace?: string;
  taskQueue: string;
  activities?: object;
  workflows?: WorkflowSource;
  identity?: string;
  extra?: Partial<WorkerOptions>;
}): Promise<Worker> {
  return Worker.create({
    connection: options.connection,
    namespace: options.namespace ?? 'default',
    taskQueue: options.taskQueue,
    activities: options.activities ?? {},
    ...(options.workflows ?? { workflowsPath }),
    ...(options.identity ? { identity: options.identity } : {}),
    // Each cached workflow keeps its sandbox in memory (about 2 MiB measured); a bound keeps a worker
    // hosting a 1,000-thread run flat in memory. Evicted workflows replay from history when they wake.
    maxCachedWorkflows: 500,
    // Heartbeats carry interrupts to running tools: flush them within a second, not the SDK's 30 s.
    maxHeartbeatThrottleInterval: '1 second',
    defaultHeartbeatThrottleInterval: '1 second',
    ...options.extra,
  });
}
