import type { ReadingClient } from './cancel';

/** Milliseconds of a protobuf timestamp (0 when absent). */
const millis = (time: { seconds?: unknown; nanos?: number | null } | null | undefined) =>
  time ? Number(time.seconds ?? 0) * 1000 + Math.floor((time.nanos ?? 0) / 1e6) : 0;

/**
 * SPEC S3.9, S5.10: the first run of a thread's own conversation, for a reader of its history (the tree
 * stream). A conversation id outlives its workflow: once that has completed (its retention passed),
 * anybody with a Temporal client can start a new chain of runs under the id, and `describe` answers
 * with that newest chain, so a reader would follow it and miss what the thread published. The thread's
 * own chain is the one its thread started (its parent is the thread's workflow); when a receiver
 * started it before its thread claimed it, it has no parent and is the earliest chain, since a later
 * one can only begin once it has ended. Chains do not overlap, so the start times of their last runs
 * order them.
 *
 * Usually the newest chain is that one; only when it is not (its start has no parent) are the chains
 * listed (visibility). Undefined when visibility lists none (a conversation started a moment ago, or a
 * namespace that cannot be listed): there is then one chain to read, the newest, as before.
 */
export async function threadConversationStart(
  client: ReadingClient,
  conversationId: string,
  threadId: string,
): Promise<string | undefined> {
  try {
    // Usually the newest chain is the thread's own, and one describe tells so; listing is the rare case.
    const newest = await client.workflow.getHandle(conversationId).describe();
    const newestInfo = newest.raw.workflowExecutionInfo;
    if (newestInfo?.parentExecution?.workflowId === threadId) return newestInfo.firstRunId || newest.runId;
    const { executions } = await client.workflowService.listWorkflowExecutions({
      namespace: client.options.namespace,
      query: `WorkflowId = "${conversationId}" AND ExecutionStatus != "ContinuedAsNew"`,
      pageSize: 100,
    });
    const chains = (executions ?? [])
      .filter((info) => info.execution?.runId)
      .sort((one, other) => millis(one.startTime) - millis(other.startTime));
    const own = chains.find((info) => info.parentExecution?.workflowId === threadId) ?? chains[0];
    if (!own) return undefined;
    const description = await client.workflow.getHandle(conversationId, own.execution!.runId!).describe();
    return description.raw.workflowExecutionInfo?.firstRunId || description.runId;
  } catch {
    return undefined;
  }
}
