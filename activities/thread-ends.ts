import { Context } from '@temporalio/activity';
import type { Client } from '@temporalio/client';
import type { ThreadStatus } from '../domain/schemas';
import { maxThreadsAsked } from '../domain/spawn-limits';

/** One thread whose workflow is no longer running, and the end Temporal gave it. */
export interface ThreadWorkflowEnd {
  threadId: string;
  status: ThreadStatus;
}

/** Temporal's close status → the thread's end (the workflow itself reported none). */
const endOf: Record<string, ThreadStatus | undefined> = {
  COMPLETED: 'completed',
  CANCELLED: 'cancelled',
  FAILED: 'failed',
  TERMINATED: 'failed',
  TIMED_OUT: 'failed',
};

/**
 * The threads among `threadIds` whose workflow has closed (its latest run: one that continued as new is
 * still running) or is gone, with the end Temporal gave it. For a root run, which Temporal tells only of
 * the closes of the workflows its current run started (workflows/outside-ends.ts).
 */
export async function threadWorkflowEnds(threadIds: readonly string[]): Promise<ThreadWorkflowEnd[]> {
  const { client } = Context.current();
  const asked = threadIds.slice(0, maxThreadsAsked);
  const ends: ThreadWorkflowEnd[] = [];
  // A few describes at a time: each is one read of the server's store.
  for (let from = 0; from < asked.length; from += 16) {
    const batch = asked.slice(from, from + 16);
    const found = await Promise.all(batch.map((threadId) => endOfWorkflow(client, threadId)));
    batch.forEach((threadId, n) => {
      const status = found[n];
      if (status) ends.push({ threadId, status });
    });
  }
  return ends;
}

async function endOfWorkflow(client: Client, threadId: string): Promise<ThreadStatus | undefined> {
  try {
    const { status } = await client.workflow.getHandle(threadId).describe();
    return endOf[status.name];
  } catch (error) {
    // Gone (past the namespace's retention): it ended, how is no longer known.
    if (error instanceof Error && error.name === 'WorkflowNotFoundError') return 'failed';
    throw error;
  }
}
