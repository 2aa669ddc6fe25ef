import type { Client } from '@temporalio/client';

/**
 * Runs `call` with its RPCs cancelled when `signal` aborts, through a controller that ends with it: the
 * connection adds an abort listener per call to the signal it is given and never removes it, so a
 * long-lived signal handed to it straight would collect one per poll.
 */
export async function withCancel<Value>(
  client: Client,
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
