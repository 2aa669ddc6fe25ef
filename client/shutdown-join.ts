import type { Client } from '@temporalio/client';
import type { ShutdownReport } from '../domain/control';
import type { ThreadId } from '../domain/ids';
import { AgentThread } from '../domain/schemas';

/** How many sub-agents' workflows a shutdown call describes at once while it finishes joining. */
const joinConcurrency = 16;

/**
 * SPEC S3.5: a shutdown call finishes joining. The run's report lists as unconfirmed the sub-agents
 * whose end its grace period did not see; once the run has closed, each call asks Temporal how each of
 * them stands now (a describe, read-only: nothing is retried or changed) and reports those that have
 * ended since as cancelled (ended as shut down: cancelled, or completed on its own) or failed (failed,
 * terminated, timed out). Those still running or not found stay unconfirmed. The run's own result keeps
 * the report as it was when the run closed.
 */
export async function joinUnconfirmed(client: Client, report: ShutdownReport): Promise<ShutdownReport> {
  if (report.unconfirmed.length === 0) return report;
  const ends = new Map<ThreadId, 'cancelled' | 'failed' | undefined>();
  const queue = [...report.unconfirmed];
  const worker = async () => {
    for (let id = queue.shift(); id !== undefined; id = queue.shift()) ends.set(id, await endOf(client, id));
  };
  await Promise.all(Array.from({ length: Math.min(joinConcurrency, queue.length) }, worker));
  const ended = (end: 'cancelled' | 'failed') => report.unconfirmed.filter((id) => ends.get(id) === end);
  return {
    ...report,
    cancelled: [...report.cancelled, ...ended('cancelled')],
    failed: [...report.failed, ...ended('failed')],
    unconfirmed: report.unconfirmed.filter((id) => ends.get(id) === undefined),
  };
}

/** How a sub-agent's workflow ended, or undefined while it runs or cannot be read. */
async function endOf(client: Client, threadId: ThreadId): Promise<'cancelled' | 'failed' | undefined> {
  try {
    const handle = client.workflow.getHandle(threadId);
    const { status } = await handle.describe();
    switch (status.name) {
      case 'CANCELLED':
        return 'cancelled';
      case 'COMPLETED': {
        const thread = AgentThread.safeParse(await handle.result());
        if (!thread.success) return undefined;
        return thread.data.status === 'failed' ? 'failed' : 'cancelled';
      }
      case 'FAILED':
      case 'TERMINATED':
      case 'TIMED_OUT':
        return 'failed';
      default:
        return undefined;
    }
  } catch {
    return undefined;
  }
}
