import { getExternalWorkflowHandle, log, type SignalDefinition } from '@temporalio/workflow';

/** Signals another workflow; a missing or finished target is logged, never fails the caller's update. */
export async function signalQuietly<Args extends unknown[]>(
  workflowId: string,
  signal: SignalDefinition<Args>,
  ...args: Args
): Promise<void> {
  try {
    await getExternalWorkflowHandle(workflowId).signal(signal, ...args);
  } catch (error) {
    log.warn('signal not delivered', { workflowId, signal: signal.name, error: String(error) });
  }
}
