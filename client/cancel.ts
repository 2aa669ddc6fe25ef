import type { Client, WorkflowClient } from '@temporalio/client';

/**
 * What reading histories and watching output need of a client: a `Client`, or the `WorkflowClient` a
 * handle holds ({@link readingClientOf}), so thread-scoped controls can read too.
 */
export interface ReadingClient {
  workflow: Pick<WorkflowClient, 'getHandle'>;
  workflowService: Client['workflowService'];
  withAbortSignal: Client['withAbortSignal'];
  options: Pick<Client['options'], 'namespace' | 'loadedDataConverter'>;
}

/** A `WorkflowClient` as a {@link ReadingClient}. */
export const readingClientOf = (workflows: WorkflowClient): ReadingClient => ({
  workflow: workflows,
  workflowService: workflows.workflowService,
  withAbortSignal: (signal, call) => workflows.withAbortSignal(signal, call),
  options: workflows.options,
});

/**
 * Runs `call` with its RPCs cancelled when `signal` aborts, through a controller that ends with it: the
 * connection adds an abort listener per call to the signal it is given and never removes it, so a
 * long-lived signal handed to it straight would collect one per poll.
 */
export async function withCancel<Value>(
  client: ReadingClient,
  signal: AbortSignal,
  call: () => Promise<Value>,
): Promise<Value> {
  const controller = new AbortController();
  const cancel = () => controller.abort(signal.reason);
  signal.addEventListener('abort', cancel, { once: true });
  try {
    return await client.withAbortSignal(controller.signal, call);
  } finally {
    signal.removeEventListener('abort', cancel);
  }
}
