import type { Client, WorkflowClient } from '@temporalio/client';
import { ErrorKind, KitError } from '../domain/errors';

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

/** SPEC S2.4: a `signal` option, when given, is an AbortSignal (a KitError naming it otherwise). */
export function abortSignalOption(signal: unknown, what: string): AbortSignal | undefined {
  if (signal === undefined) return undefined;
  const candidate = signal as Partial<AbortSignal> | null;
  if (
    typeof candidate?.addEventListener !== 'function' ||
    typeof candidate.removeEventListener !== 'function' ||
    typeof candidate.aborted !== 'boolean'
  )
    throw new KitError(ErrorKind.Protocol, `${what}: \`signal\` must be an AbortSignal`, {
      fields: ['signal'],
    });
  return signal as AbortSignal;
}

/**
 * Waits for `promise` unless `signal` aborts first, then rejects with `aborted(signal)`. The promise is left to
 * end by itself, its failure handled here either way (never an unhandled rejection).
 */
export function abortable<Value>(
  promise: Promise<Value>,
  signal: AbortSignal | undefined,
  aborted: (signal: AbortSignal) => Error,
): Promise<Value> {
  if (!signal) return promise;
  return new Promise<Value>((resolve, reject) => {
    const onAbort = () => reject(aborted(signal));
    void promise.then(resolve, reject).finally(() => signal.removeEventListener('abort', onAbort));
    if (signal.aborted) onAbort();
    else signal.addEventListener('abort', onAbort, { once: true });
  });
}
