import { NativeConnection, Worker, type WorkerOptions } from '@temporalio/worker';

/** Where workflow code comes from: the source folder (bundled at start) or a prebuilt bundle. */
export type WorkflowSource =
  { workflowsPath: string } | { workflowBundle: { codePath: string } | { code: string } };

export const workflowsPath = require.resolve('../workflows');

/**
 * How every agents-kit workflow bundle is built (pass to `bundleWorkflowCode` for a prebuilt one): the
 * workflow code is loaded once per worker thread and shared by all its workflows, frozen
 * (workflows/shared-modules.ts), instead of once per cached workflow.
 */
export const bundleOptions = {
  workflowsPath,
  preloadModules: [require.resolve('../workflows/shared-modules')],
};

/**
 * Workflows a worker keeps in memory. With the workflow code shared (`bundleOptions`) a cached
 * workflow costs only its own state, ~0.2–0.4 MB of RSS measured (it was ~3 MB when each had its own
 * copy of the code), so this bound, not the number of threads, sets a worker's memory. Evicted
 * workflows replay from history when they next wake. Set with `AGENTS_KIT_MAX_CACHED_WORKFLOWS`.
 */
export const defaultMaxCachedWorkflows = 1_000;

/** An agents-kit worker on one task queue: every workflow type, and the activities given. */
export async function createAgentWorker(options: {
  connection: NativeConnection;
  namespace?: string;
  taskQueue: string;
  activities?: object;
  workflows?: WorkflowSource;
  identity?: string;
  maxCachedWorkflows?: number;
  extra?: Partial<WorkerOptions>;
}): Promise<Worker> {
  const workflows = options.workflows ?? { workflowsPath };
  return Worker.create({
    connection: options.connection,
    namespace: options.namespace ?? 'default',
    taskQueue: options.taskQueue,
    activities: options.activities ?? {},
    ...('workflowsPath' in workflows
      ? { ...workflows, bundlerOptions: { preloadModules: bundleOptions.preloadModules } }
      : workflows),
    ...(options.identity ? { identity: options.identity } : {}),
    maxCachedWorkflows: options.maxCachedWorkflows ?? defaultMaxCachedWorkflows,
    // Heartbeats carry interrupts to running tools: flush them within a second, not the SDK's 30 s.
    maxHeartbeatThrottleInterval: '1 second',
    defaultHeartbeatThrottleInterval: '1 second',
    ...options.extra,
  });
}
