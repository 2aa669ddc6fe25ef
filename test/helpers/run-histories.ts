import type { Client } from '@temporalio/client';
import { eventually } from './runs';

/** Temporal warns at 10,240 events per run (and fails at 51,200): every run must stay under this. */
export const historyEventBound = 10_240;

/** One run of one workflow id and the length of its history. */
export interface RunHistory {
  workflowId: string;
  runId: string;
  workflowType: string;
  status: string;
  events: number;
}

/**
 * Every run of a workflow id with its history length. Visibility is eventually consistent: it is read
 * until it lists `minRuns` runs and the current run.
 */
export async function runHistories(client: Client, workflowId: string, minRuns = 1): Promise<RunHistory[]> {
  const current = (await client.workflow.getHandle(workflowId).describe()).runId;
  const runs = await eventually(
    async () => {
      const found: { runId: string; type: string; status: string }[] = [];
      for await (const execution of client.workflow.list({ query: `WorkflowId = "${workflowId}"` }))
        found.push({ runId: execution.runId, type: execution.type, status: execution.status.name });
      return found;
    },
    (found) => found.length >= minRuns && found.some((run) => run.runId === current),
    `${minRuns} run(s) of ${workflowId} in visibility`,
  );
  const histories: RunHistory[] = [];
  for (const run of runs) {
    const history = await client.workflow.getHandle(workflowId, run.runId).fetchHistory();
    histories.push({
      workflowId,
      runId: run.runId,
      workflowType: run.type,
      status: run.status,
      events: history.events?.length ?? 0,
    });
  }
  return histories;
}

/** Per workflow type: runs, runs that continued as new, the largest history. */
export interface HistoryStats {
  workflowType: string;
  runs: number;
  continuedAsNew: number;
  largestEvents: number;
}

export function historyStats(histories: readonly RunHistory[]): HistoryStats[] {
  const byType = new Map<string, HistoryStats>();
  for (const run of histories) {
    const stats = byType.get(run.workflowType) ?? {
      workflowType: run.workflowType,
      runs: 0,
      continuedAsNew: 0,
      largestEvents: 0,
    };
    stats.runs++;
    if (run.status === 'CONTINUED_AS_NEW') stats.continuedAsNew++;
    stats.largestEvents = Math.max(stats.largestEvents, run.events);
    byType.set(run.workflowType, stats);
  }
  return [...byType.values()];
}

/** `runHistories` of each workflow id in turn, concatenated. */
export async function runHistoriesOf(client: Client, workflowIds: readonly string[]): Promise<RunHistory[]> {
  const histories: RunHistory[] = [];
  for (const workflowId of workflowIds) histories.push(...(await runHistories(client, workflowId)));
  return histories;
}
