import { getExternalWorkflowHandle, log, type SignalDefinition } from '@temporalio/workflow';

/**
 * Signals another workflow; a missing or finished target is logged, never fails the caller's update.
 * True once the signal was delivered.
 */
export async function signalQuietly<Args extends unknown[]>(
  workflowId: string,
  signal: SignalDefinition<Args>,
  ...args: Args
): Promise<boolean> {
  try {
    await getExternalWorkflowHandle(workflowId).signal(signal, ...args);
    return true;
  } catch (error) {
    log.warn('signal not delivered', { workflowId, signal: signal.name, error: String(error) });
    return false;
  }
}
