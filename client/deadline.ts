import type { WorkflowClient } from '@temporalio/client';

/** `call`'s result, or undefined once `ms` passed (the call is cancelled through its abort signal). */
export async function withDeadline<Result>(
  client: WorkflowClient,
  ms: number,
  call: () => Promise<Result>,
): Promise<Result | undefined> {
  const controller = new AbortController();
  const timer = setTimeout(() => controller.abort(), ms);
  try {
    return await client.withAbortSignal(controller.signal, call);
  } catch (error) {
    if (controller.signal.aborted) return undefined;
    throw error;
  } finally {
    clearTimeout(timer);
  }
}
