import { z } from 'zod';
import { isGrpcServiceError } from '@temporalio/client';
import { NativeConnection } from '@temporalio/worker';
import { namespaceNotFound } from '../client/errors';
import { KitError, objectInput, parseInput } from '../domain/errors';
import type { AgentWorkerOptions } from './create-worker';

/**
 * What `createAgentWorker` checks before `Worker.create`, which, once it has bundled or loaded the
 * workflow code, starts the workflow threads and does not stop them if it then fails: the process would
 * stay up on a worker that never ran. Each problem found here is a KitError instead. Returns the
 * shutdown grace to give the worker.
 */
export async function preflight(options: AgentWorkerOptions): Promise<{ graceMs: number }> {
  objectInput(options, 'createAgentWorker options');
  parseInput(TaskQueueName, options.taskQueue, 'createAgentWorker: taskQueue');
  for (const field of ['activities', 'extra'] as const)
    if (options[field] !== undefined) objectInput(options[field], `createAgentWorker: ${field}`);
  const connection: unknown = options.extra?.connection ?? options.connection;
  // Temporal's default connection (localhost) when none is given.
  if (connection !== undefined && !(connection instanceof NativeConnection)) {
    throw connectionRefused(connection);
  }
  const graceMs = options.shutdownGraceMs ?? defaultShutdownGraceMs;
  if (!Number.isSafeInteger(graceMs) || graceMs < 0) {
    throw KitError.protocol(
      `createAgentWorker: shutdownGraceMs must be a whole number ≥ 0, not ${String(graceMs)}`,
      { fields: ['shutdownGraceMs'] },
    );
  }
  if (connection)
    await checkNamespace(connection, options.extra?.namespace ?? options.namespace ?? 'default');
  return { graceMs };
}

/**
 * How long a stopping worker lets its running activities finish before cancelling them, unless told
 * otherwise (Temporal's own default is 0: a deploy would cut off every model call in flight, to be
 * paid for again on another worker). Below the 30 s Kubernetes gives a stopping pod by default.
 */
export const defaultShutdownGraceMs = 20_000;

/** gRPC's NOT_FOUND status code. */
const grpcNotFound = 5;

/**
 * A namespace the server does not have is NotFound, named with what to do about it (Temporal's own
 * error, from `Worker.create`, is a gRPC status dump). Any other answer, e.g. a key not allowed to
 * describe namespaces, leaves the question to `Worker.create`.
 */
async function checkNamespace(connection: NativeConnection, namespace: string): Promise<void> {
  try {
    await connection.workflowService.describeNamespace({ namespace });
  } catch (error) {
    if (isGrpcServiceError(error) && error.code === grpcNotFound) throw namespaceNotFound(namespace);
  }
}

/**
 * A worker runs on the native bridge of the `@temporalio/worker` that agents-kit imports. A connection
 * made by another copy of that package (an app with its own version beside agents-kit's), or not a
 * `NativeConnection` at all, fails deep in `Worker.create` ("failed to downcast …"); refused here
 * first, saying why.
 */
function connectionRefused(connection: unknown): KitError {
  const kind = (connection as { constructor?: { name?: unknown } } | null)?.constructor?.name;
  const what =
    kind === 'NativeConnection'
      ? 'a NativeConnection of another copy of @temporalio/worker'
      : `${typeof kind === 'string' ? `a ${kind}` : String(connection)}, not a NativeConnection`;
  return new KitError(
    'Protocol',
    `createAgentWorker: the connection is ${what}; agents-kit runs on @temporalio/worker ` +
      `${workerVersion()} (its peer dependency): give it a NativeConnection made by that version, ` +
      'installed in your app, so your app and agents-kit share one copy of the Temporal SDK',
  );
}

/** The version of the `@temporalio/worker` this module imports. */
function workerVersion(): string {
  try {
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    return (require('@temporalio/worker/package.json') as { version: string }).version;
  } catch {
    return 'see agents-kit/package.json';
  }
}

/** A task queue's name as Temporal takes it: 1 to 1,000 characters. */
const TaskQueueName = z.string().min(1).max(1_000);
