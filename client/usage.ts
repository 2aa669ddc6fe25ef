import type { Client } from '@temporalio/client';
import { usageQuery, type UsageView } from '../domain/messages';
import { RunSnapshot } from '../domain/run-snapshot';
import { runCounters } from '../domain/run-turns';
import { totalUsage, type Usage, type UsageLedger } from '../domain/usage';
import { checkClient, kitCall } from './errors';
import { KitError, parseInput } from '../domain/errors';
import { parseId } from '../domain/ids';

/** One thread's line of a {@link UsageReport}: its own model calls, per model and in all. */
export interface ThreadUsageLine {
  threadId: string;
  path: string;
  status: string;
  total: Usage;
  byModel: UsageLedger;
  /** Its workflow could not be asked (gone past the namespace's retention, say): no numbers. */
  unavailable?: string;
}

/** SPEC S11.3: what a tree's model calls used, as their providers reported it, and what it cost. */
export interface UsageReport {
  rootId: string;
  /** The tree's ledger at the root run, from its threads' reports (each turn's usage once it ended). */
  tree: { total: Usage; byModel: UsageLedger };
  /** Each thread's own ledger, asked of its workflow (it includes a turn still running). */
  threads: ThreadUsageLine[];
  /**
   * The tree's budgets and what it used of them, as the root counts (SPEC S6.4): tokens, and US dollars
   * at the worker's prices when the grant set `budgetUsd`. Reservations of calls in flight count as used.
   */
  budget: { tokens: { limit: number; used: number }; usd?: { limit: number; used: number } };
}

/** Threads asked at once: queries are cheap, but each may wake a worker to replay a closed workflow. */
const parallelQueries = 8;

/**
 * The usage report of root run `rootId`: the root's tree ledger and each thread's, by asking every
 * workflow of the registry `snapshot` lists (queries: no billable action, nothing in any history).
 */
export async function usageReport(
  client: Client,
  rootId: string,
  rawSnapshot: RunSnapshot,
): Promise<UsageReport> {
  checkClient(client, 'usage');
  parseId('thread', rootId, 'rootId');
  const snapshot = parseInput(RunSnapshot, rawSnapshot, 'usage: snapshot');
  if (!snapshot.records.some((record) => record.thread.id === rootId))
    throw KitError.protocol(`usage: the snapshot is not of root run ${rootId} (it has no record of it)`);
  const root = await kitCall('usage', () => client.workflow.getHandle(rootId).query(usageQuery));
  const records = snapshot.records;
  const threads: ThreadUsageLine[] = new Array(records.length);
  let next = 0;
  const worker = async () => {
    for (let index = next++; index < records.length; index = next++) {
      const thread = records[index]!.thread;
      const line = { threadId: thread.id, path: thread.path, status: thread.status };
      try {
        const view: UsageView =
          thread.id === rootId ? root : await client.workflow.getHandle(thread.id).query(usageQuery);
        threads[index] = { ...line, total: totalUsage(view.ledger), byModel: view.ledger };
      } catch (error) {
        const reason = error instanceof Error ? error.message : String(error);
        threads[index] = { ...line, total: totalUsage({}), byModel: {}, unavailable: reason.slice(0, 300) };
      }
    }
  };
  await Promise.all(Array.from({ length: Math.min(parallelQueries, records.length) }, worker));
  const tree = root.tree ?? {};
  const counters = runCounters(snapshot, rootId);
  const limits = snapshot.records.find((record) => record.thread.id === rootId)!.limits;
  const budget = {
    tokens: { limit: limits.budgetTokens, used: counters.tokens },
    ...(counters.budgetUsd === undefined
      ? {}
      : { usd: { limit: counters.budgetUsd, used: counters.costUsd ?? 0 } }),
  };
  return { rootId, tree: { total: totalUsage(tree), byModel: tree }, threads, budget };
}
