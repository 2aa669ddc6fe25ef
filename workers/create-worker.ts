import type { PayloadCodec } from '@temporalio/common';
import { Worker, type NativeConnection, type WorkerOptions } from '@temporalio/worker';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import type { Tracing } from '../client/tracing';
import { defaultMaxCachedWorkflows } from './heap-cap';
import { tracingSinks } from './tracing-sink';
import { preflight } from './worker-preflight';

/** Where workflow code comes from: the source folder (bundled at start) or a prebuilt bundle. */
export type WorkflowSource =
  { workflowsPath: string } | { workflowBundle: { codePath: string } | { code: string } };

/** The workflow code (`agents-kit/workflows`), for `bundleWorkflowCode` or a worker's `workflowsPath`. */
export const workflowsPath = require.resolve('../workflows');

/**
 * The payload converter of agents-kit workflows (domain/payload-converter.ts): Temporal's default one,
 * except that a payload that cannot be decoded reads as a value every handler refuses, instead of
 * failing the workflow task that holds it on every attempt (SPEC S3.10).
 */
export const payloadConverterPath = require.resolve('../domain/payload-converter');

/**
 * How every agents-kit workflow bundle is built (pass to `bundleWorkflowCode` for a prebuilt one): the
 * workflow code is loaded once per worker thread and shared by all its workflows, frozen
 * (workflows/shared-modules.ts), instead of once per cached workflow; its tracing interceptors
 * (SPEC S11.2) export through the sink `createAgentWorker` registers (`tracingSinks` for other workers);
 * its payloads are decoded by {@link payloadConverterPath}.
 */
export const bundleOptions = {
  workflowsPath,
  preloadModules: [require.resolve('../workflows/shared-modules')],
  workflowInterceptorModules: [require.resolve('../workflows/tracing-interceptors')],
  payloadConverterPath,
};

/**
 * {@link bundleOptions} without the tracing interceptors: the bundle of a worker that exports no spans.
 * Its workflows run every history exactly as a traced worker's do (the interceptors only add headers
 * and record spans), so a tree can move between traced and untraced workers; they skip building spans
 * nobody exports (~1–2 ms of workflow-thread time per agent step, BENCHMARKS.md).
 */
export const untracedBundleOptions = {
  workflowsPath,
  preloadModules: bundleOptions.preloadModules,
  payloadConverterPath,
};

/** `dist/<file>` of the installed package, or undefined when running from sources (no build). */
function prebuilt(file: string): string | undefined {
  const path = join(__dirname, '..', file);
  return existsSync(path) ? path : undefined;
}

/**
 * The workflow bundle built with {@link bundleOptions} when the package was built
 * (`dist/workflow-bundle.js`), or undefined when running from sources. Workers given `tracing` load it
 * instead of running webpack at start.
 */
export const prebuiltWorkflowBundlePath: string | undefined = prebuilt('workflow-bundle.js');

/** The same built with {@link untracedBundleOptions} (`dist/workflow-bundle-untraced.js`). */
export const prebuiltUntracedWorkflowBundlePath: string | undefined = prebuilt('workflow-bundle-untraced.js');

export { defaultMaxCachedWorkflows };

export { defaultShutdownGraceMs } from './worker-preflight';

/** What {@link createAgentWorker} takes. */
export interface AgentWorkerOptions {
  connection: NativeConnection;
  namespace?: string | undefined;
  taskQueue: string;
  /** `createActivities(...)`; none when omitted (a worker for workflows only). */
  activities?: object | undefined;
  /**
   * Default: the prebuilt bundle of the installed package, else the workflow sources bundled at start;
   * with the tracing interceptors when `tracing` is given, without them when it is not.
   */
  workflows?: WorkflowSource | undefined;
  identity?: string | undefined;
  maxCachedWorkflows?: number | undefined;
  /**
   * A payload codec, e.g. `createEncryptionCodec({ keys })`: the worker encodes what it sends and
   * decodes what it receives with it, after any codecs of `extra.dataConverter`. Every client and worker
   * of the namespace needs the same one.
   */
  codec?: PayloadCodec | undefined;
  /**
   * SPEC S11.2: where the spans of the worker's workflows go (`createTracing(...)` or
   * `tracingFromEnvironment()`); untraced when omitted. Shut it down after the worker stops.
   */
  tracing?: Tracing | undefined;
  /**
   * Once the worker is told to stop (`worker.shutdown()`, SIGTERM, SIGINT), how long its running
   * activities (model calls, tools) may take to finish, in ms; then they are cancelled and retried on
   * another worker. Default {@link defaultShutdownGraceMs}. The worker stops polling at once either way.
   */
  shutdownGraceMs?: number | undefined;
  /** Any other Temporal `WorkerOptions` (interceptors, tuning, …). */
  extra?: Partial<WorkerOptions> | undefined;
}

/** The workflow source a worker uses when none is given. */
function defaultWorkflowSource(traced: boolean): WorkflowSource {
  const codePath = traced ? prebuiltWorkflowBundlePath : prebuiltUntracedWorkflowBundlePath;
  return codePath ? { workflowBundle: { codePath } } : { workflowsPath };
}

/**
 * An agents-kit worker on one task queue: every workflow type, and the activities given.
 *
 * @example
 * const worker = await createAgentWorker({ connection, taskQueue: 'agents-kit', activities: createActivities() });
 * await worker.run(); // until worker.shutdown() or SIGINT/SIGTERM
 *
 * @example
 * // Payloads encrypted (SPEC S3.9); clients pass dataConverter: { payloadCodecs: [codec] } too.
 * const codec = createEncryptionCodec({ keys: loadCodecKeys()! });
 * const worker = await createAgentWorker({ connection, taskQueue: 'agents-kit', activities: createActivities(), codec });
 */
export async function createAgentWorker(options: AgentWorkerOptions): Promise<Worker> {
  const { graceMs } = await preflight(options);
  const traced = options.tracing !== undefined;
  const workflows = options.workflows ?? defaultWorkflowSource(traced);
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
    shutdownGraceTime: graceMs,
    ...options.extra,
    // Bundled at start, the workflows of a traced worker get the tracing interceptors (a prebuilt
    // bundle has them built in, or not).
    ...('workflowsPath' in workflows && traced
      ? { interceptors: withTracingInterceptors(options.extra?.interceptors) }
      : {}),
    sinks: { ...options.extra?.sinks, ...tracingSinks(options.tracing) },
    dataConverter: dataConverterOf(options.extra?.dataConverter, options.codec),
  });
}

/**
 * The worker's data converter: `given` (from `extra`), with our payload converter unless it names its
 * own (bundled from sources, the workflows get it; a prebuilt bundle has its own built in), and `codec`
 * as its last codec (encoding runs the codecs in order: encryption last).
 */
function dataConverterOf(given: WorkerOptions['dataConverter'], codec: PayloadCodec | undefined) {
  return {
    ...given,
    payloadConverterPath: given?.payloadConverterPath ?? payloadConverterPath,
    ...(codec ? { payloadCodecs: [...(given?.payloadCodecs ?? []), codec] } : {}),
  };
}

/** `interceptors` with the tracing workflow interceptors first. */
function withTracingInterceptors(
  interceptors: WorkerOptions['interceptors'],
): NonNullable<WorkerOptions['interceptors']> {
  return {
    ...interceptors,
    workflowModules: [...bundleOptions.workflowInterceptorModules, ...(interceptors?.workflowModules ?? [])],
  };
}
