import {
  CancelledFailure,
  NamespaceNotFoundError,
  isGrpcServiceError,
  TerminatedFailure,
  WorkflowFailedError,
  type Client,
  type WorkflowExecutionDescription,
} from '@temporalio/client';
import { ErrorKind, KitError, kitErrorFromFailure } from '../domain/errors';

/**
 * Every error leaving the client API as a KitError (SPEC S2.3): a KitError carried by a Temporal failure
 * keeps its kind, message and details; transport failures are retryable `Integration` errors; anything
 * else is `Integration` too. The original error stays reachable as `cause`.
 */
export function toKitError(error: unknown, context?: string): KitError {
  const carried = kitErrorFromFailure(error);
  if (carried) return carried;
  const message = error instanceof Error ? error.message : String(error);
  const prefix = context ? `${context}: ` : '';
  if (error instanceof Error && error.name === 'WorkflowNotFoundError') {
    // A run that has ended answers updates with "already completed": its controls are closed (SPEC S3.8).
    const ended = /already completed|already finished/i.test(message);
    return new KitError(
      ended ? ErrorKind.Closed : ErrorKind.NotFound,
      `${prefix}${ended ? 'the run has ended' : 'no such workflow'}: ${message}`,
      undefined,
      { cause: error },
    );
  }
  if (error instanceof NamespaceNotFoundError) return namespaceNotFound(error.namespace, error, prefix);
  if (error instanceof WorkflowFailedError) {
    // A run cancelled or terminated from outside has ended for good: nothing to retry (SPEC S2.2).
    const ended =
      error.cause instanceof CancelledFailure
        ? 'was cancelled'
        : error.cause instanceof TerminatedFailure
          ? `was terminated${error.cause.message ? ` (${error.cause.message})` : ''}`
          : undefined;
    if (ended)
      return new KitError(ErrorKind.Closed, `${prefix}the workflow ${ended}`, undefined, { cause: error });
  }
  // The SDK names every query the server calls an invalid argument so; only a missing handler is final.
  if (
    error instanceof Error &&
    error.name === 'QueryNotRegisteredError' &&
    /did not register a handler/i.test(message)
  ) {
    // The workflow runs no handler for it: not a workflow of this kind, or one that failed before it began.
    return new KitError(
      ErrorKind.InvalidState,
      `${prefix}the workflow does not answer this (not an agents-kit workflow of that kind, or one that failed at its start): ${message}`,
      undefined,
      { cause: error },
    );
  }
  if (noWorkerAnswered(error)) {
    // A query waits for a worker of the workflow's task queue (30 s on the server's side).
    return new KitError(
      ErrorKind.Timeout,
      `${prefix}no worker answered in time: is a worker running on the run's task queue (the one it was attached with)? (${message})`,
      undefined,
      { cause: error },
    );
  }
  if (isGrpcServiceError(error) || (error instanceof Error && error.name === 'ServiceError')) {
    return new KitError(ErrorKind.Integration, `${prefix}Temporal service error: ${message}`, undefined, {
      cause: error,
    });
  }
  return new KitError(ErrorKind.Integration, `${prefix}${message}`, undefined, { cause: error });
}

/** SPEC S2: the namespace `namespace` does not exist on the server a worker or client talks to. */
export const namespaceNotFound = (namespace: string, cause?: unknown, prefix = ''): KitError =>
  new KitError(
    ErrorKind.NotFound,
    `${prefix}namespace "${namespace}" does not exist on this Temporal server: create it ` +
      `(temporal operator namespace create --namespace ${namespace}) or set TEMPORAL_NAMESPACE to one that does`,
    { namespace },
    cause === undefined ? undefined : { cause },
  );

/** Runs a client call, converting whatever it throws with {@link toKitError}. */
export async function kitCall<Result>(context: string, call: () => Promise<Result>): Promise<Result> {
  try {
    return await call();
  } catch (error) {
    throw toKitError(error, context);
  }
}

/** Whether an error is Temporal's answer that no workflow has the id asked about. */
export const isWorkflowNotFound = (error: unknown): boolean =>
  error instanceof Error && error.name === 'WorkflowNotFoundError';

/** The workflow `workflowId`'s description, undefined when no workflow has that id; other failures as KitErrors. */
export const describeIfAny = (
  client: Client,
  workflowId: string,
  context: string,
): Promise<WorkflowExecutionDescription | undefined> =>
  kitCall(context, () =>
    client.workflow
      .getHandle(workflowId)
      .describe()
      .catch((error: unknown) => {
        if (isWorkflowNotFound(error)) return undefined;
        throw error;
      }),
  );

/** SPEC S2.4: `client` is a Client of @temporalio/client (a Protocol KitError otherwise). */
export function checkClient(client: unknown, context: string): asserts client is Client {
  if (typeof (client as Partial<Client> | undefined)?.workflow?.getHandle !== 'function')
    throw KitError.protocol(`${context}: \`client\` must be a Client of @temporalio/client`);
}

/** gRPC's DEADLINE_EXCEEDED status code. */
const grpcDeadlineExceeded = 4;

/** A call the server gave up on because no worker took it (a query with no worker polling its queue). */
function noWorkerAnswered(error: unknown): boolean {
  const cause = error instanceof Error && error.name === 'ServiceError' ? error.cause : error;
  return (
    isGrpcServiceError(cause) &&
    cause.code === grpcDeadlineExceeded &&
    /before a worker could process it/i.test(cause.details ?? cause.message)
  );
}
